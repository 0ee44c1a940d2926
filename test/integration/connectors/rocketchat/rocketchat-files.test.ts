/**
 * Rocket.Chat's files (connectors/rocketchat/files/), over the Rocket.Chat fixture dump
 * (test/fixtures/rocketchat) extended with `rocketchat_uploads.bson` and a GridFS bucket written
 * with the real layout (`rocketchat_uploads.files`: `_id` = the upload's, `length`, `chunkSize`;
 * `rocketchat_uploads.chunks`: `files_id`, `n`, `data`, in an order that is not `n`'s) by the `bson`
 * package: each attachment carries `{reader: rocketchat, ref: <upload _id>}` with the host of its
 * store, and the reader returns the exact bytes (SHA-256) from GridFS chunks, from the FileSystem
 * store (`<_id>.<extension>`) and from the AmazonS3 store (`AmazonS3.path` in s3rver), from an
 * offset too; a chunk missing from the dump makes the file `truncated`, an upload without a record
 * `missing`, an id walking out of the FileSystem directory `denied`, another store refused by name.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { RocketChatConfigSchema } from '../../../../connectors/rocketchat/config.ts'
import { createRocketChatConnector } from '../../../../connectors/rocketchat/index.ts'
import { bsonBytes, writeRocketChatDump } from '../../../fixtures/rocketchat/dump.ts'
import { rocketChatSeed } from '../../../fixtures/rocketchat/seed.ts'
import { attachmentsOf, openFailure, readRef, sha256 } from '../../../helpers/connector-files.ts'
import { type SourceBucket, startSourceBucket } from '../../../helpers/source-bucket.ts'

const DIAGRAM = 'fDiagramXXXXXXXXX'
const SPEC = 'fSpecXXXXXXXXXXXX'
const DIAGRAM_BYTES = randomBytes(5120 + 300)
const SPEC_BYTES = randomBytes(70_000)
const BROKEN = randomBytes(3000)
const CHUNK = 1024

let bucket: SourceBucket
let dir = ''
const fsDir = () => join(dir, '..', 'uploads')

/** GridFS chunks of `bytes` as `GridFSBucket` writes them, for file `id`. */
function chunksOf(id: string, bytes: Buffer) {
  return Array.from({ length: Math.ceil(bytes.length / CHUNK) }, (_, n) => ({
    _id: `${id}-c${n}`,
    files_id: id,
    n,
    data: bytes.subarray(n * CHUNK, (n + 1) * CHUNK),
  }))
}

beforeAll(async () => {
  dir = writeRocketChatDump(rocketChatSeed())
  bucket = await startSourceBucket('rocketchat-uploads')
  await bucket.put(`acme-uid/uploads/room/user/${SPEC}`, SPEC_BYTES)
  const uploads = [
    { _id: DIAGRAM, name: 'diagram.png', store: 'GridFS:Uploads', extension: 'png', size: DIAGRAM_BYTES.length, complete: true },
    // The spec is in the FileSystem store here; the S3 variant below uses the second dump.
    { _id: SPEC, name: 'Spec v2.pdf', store: 'FileSystem:Uploads', extension: 'pdf', size: SPEC_BYTES.length, complete: true },
    { _id: 'fBrokenGrid', store: 'GridFS:Uploads', size: BROKEN.length },
    { _id: '../../etc/passwd', store: 'FileSystem:Uploads' },
    { _id: 'fGcsXXXXXXXXXXXXX', store: 'GoogleCloudStorage:Uploads' },
    { _id: 'fS3XXXXXXXXXXXXXX', store: 'AmazonS3:Uploads', AmazonS3: { path: `acme-uid/uploads/room/user/${SPEC}` } },
  ]
  const chunks = [...chunksOf(DIAGRAM, DIAGRAM_BYTES), ...chunksOf('fBrokenGrid', BROKEN).filter((c) => c.n !== 1)]
  // Not in `n` order, as a dump of a collection written concurrently may be.
  chunks.reverse()
  writeFileSync(join(dir, 'rocketchat_uploads.bson'), bsonBytes(uploads))
  writeFileSync(
    join(dir, 'rocketchat_uploads.files.bson'),
    bsonBytes([
      { _id: DIAGRAM, length: DIAGRAM_BYTES.length, chunkSize: CHUNK, uploadDate: new Date(), filename: DIAGRAM, contentType: 'image/png' },
      { _id: 'fBrokenGrid', length: BROKEN.length, chunkSize: CHUNK, uploadDate: new Date(), filename: 'fBrokenGrid' },
    ]),
  )
  writeFileSync(join(dir, 'rocketchat_uploads.chunks.bson'), bsonBytes(chunks))
  mkdirSync(fsDir(), { recursive: true })
  writeFileSync(join(fsDir(), `${SPEC}.pdf`), SPEC_BYTES)
})

afterAll(async () => {
  await bucket?.stop()
  rmSync(join(dir, '..'), { recursive: true, force: true })
})

const connector = (files: unknown) => createRocketChatConnector(RocketChatConfigSchema.parse({ connector: 'rocketchat', path: dir, files }))

describe('Rocket.Chat files', () => {
  it("each upload's attachment carries its _id, the host by its store", async () => {
    const found = await attachmentsOf(connector({ fileSystemPath: fsDir() }))
    const byId = new Map(found.map((f) => [f.attachment.source?.ref, f.attachment.source?.host]))
    expect(byId).toEqual(
      new Map([
        [DIAGRAM, 'gridfs'],
        [SPEC, 'local'],
      ]),
    )
    expect(found.every((f) => f.attachment.source?.reader === 'rocketchat')).toBe(true)
  })

  it('GridFS: the exact bytes from the dump’s chunks, and from an offset mid-chunk', async () => {
    const reader = connector({}).files!()
    const whole = await readRef(reader, DIAGRAM)
    expect([whole.size, whole.start, sha256(whole.bytes)]).toEqual([DIAGRAM_BYTES.length, 0, sha256(DIAGRAM_BYTES)])
    const tail = await readRef(reader, DIAGRAM, 2500)
    expect([tail.start, sha256(tail.bytes)]).toEqual([2500, sha256(DIAGRAM_BYTES.subarray(2500))])
    await reader.close?.()
  })

  it('GridFS: a chunk missing from the dump is truncated, before any byte', async () => {
    const e = await openFailure(connector({}).files!(), 'fBrokenGrid')
    expect(e.fileCause).toBe('truncated')
    expect(e.message).toContain('n = 1')
  })

  it('FileSystem: <_id>.<extension> under the store directory, from an offset too; an id walking out is denied', async () => {
    const reader = connector({ fileSystemPath: fsDir() }).files!()
    const got = await readRef(reader, SPEC, 65_000)
    expect([got.size, got.start, sha256(got.bytes)]).toEqual([SPEC_BYTES.length, 65_000, sha256(SPEC_BYTES.subarray(65_000))])
    expect((await openFailure(reader, '../../etc/passwd')).fileCause).toBe('denied')
  })

  it('AmazonS3: the AmazonS3.path key, with Range', async () => {
    const reader = connector({ s3: bucket.settings }).files!()
    const got = await readRef(reader, 'fS3XXXXXXXXXXXXXX', 10)
    expect([got.size, got.start, sha256(got.bytes)]).toEqual([SPEC_BYTES.length, 10, sha256(SPEC_BYTES.subarray(10))])
    await reader.close?.()
  })

  it('no record, another store, a store not configured: each refused with its reason', async () => {
    const reader = connector({}).files!()
    expect((await openFailure(reader, 'fNoRecordXXXXXXXX')).fileCause).toBe('missing')
    expect((await openFailure(reader, 'fGcsXXXXXXXXXXXXX')).message).toContain('GoogleCloudStorage:Uploads')
    expect((await openFailure(reader, SPEC)).message).toContain('source.files.fileSystemPath')
  })

  it('a FileSystem directory that does not exist is a configuration error naming the field', () => {
    expect(() => connector({ fileSystemPath: join(dir, 'nope') }).files!()).toThrow(/source\.files\.fileSystemPath: .*nope does not exist/)
  })

  it('without source.files, no locator and no reader', async () => {
    const c = createRocketChatConnector(RocketChatConfigSchema.parse({ connector: 'rocketchat', path: dir }))
    expect(c.files).toBeUndefined()
    expect((await attachmentsOf(c)).every((f) => f.attachment.source === undefined)).toBe(true)
  })
})
