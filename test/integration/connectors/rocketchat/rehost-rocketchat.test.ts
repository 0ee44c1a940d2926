/**
 * Rocket.Chat's files re-hosted end to end (issue 27): the Rocket.Chat fixture dump with its
 * uploads — the diagram in the dump's GridFS bucket (`rocketchat_uploads.files`/`.chunks`, chunks
 * out of `n` order), the spec in the FileSystem store directory (`source.files.fileSystemPath`) —
 * → `chatferry run` as a process with `files.mode: rehost` into an s3rver bucket → the sandbox.
 * Every attachment on the sandbox points into the bucket and hashes to the upload's bytes; the
 * store's secret is in neither the ledger nor what the CLI printed.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { bsonBytes, writeRocketChatDump } from '../../../fixtures/rocketchat/dump.ts'
import { rocketChatSeed } from '../../../fixtures/rocketchat/seed.ts'
import { useCliSuite } from '../../../helpers/cli-suite.ts'
import { expectEveryAttachmentRehosted, expectNoSecrets, ledgerFilesAndReports, rehostJob } from '../../../helpers/connector-rehost.ts'
import { pdfBytes, pngBytes } from '../../../helpers/file-server.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { type S3TestServer, startS3Server } from '../../../helpers/s3-server.ts'

const DIAGRAM = 'fDiagramXXXXXXXXX'
const SPEC = 'fSpecXXXXXXXXXXXX'
/** The sizes the fixture's messages and upload records state. */
const DIAGRAM_BYTES = pngBytes(5120)
const SPEC_BYTES = pdfBytes(70_000)
const CHUNK = 1024

const suite = useCliSuite()
let s3: S3TestServer
let dir = ''
const fsDir = () => join(dir, '..', 'uploads')

beforeAll(async () => {
  s3 = await startS3Server(['rocket'])
  dir = writeRocketChatDump(rocketChatSeed())
  writeFileSync(
    join(dir, 'rocketchat_uploads.bson'),
    bsonBytes([
      { _id: DIAGRAM, name: 'diagram.png', store: 'GridFS:Uploads', extension: 'png', size: DIAGRAM_BYTES.length, complete: true },
      { _id: SPEC, name: 'Spec v2.pdf', store: 'FileSystem:Uploads', extension: 'pdf', size: SPEC_BYTES.length, complete: true },
    ]),
  )
  writeFileSync(
    join(dir, 'rocketchat_uploads.files.bson'),
    bsonBytes([
      { _id: DIAGRAM, length: DIAGRAM_BYTES.length, chunkSize: CHUNK, uploadDate: new Date(), filename: DIAGRAM, contentType: 'image/png' },
    ]),
  )
  const chunks = Array.from({ length: DIAGRAM_BYTES.length / CHUNK }, (_, n) => ({
    _id: `${DIAGRAM}-c${n}`,
    files_id: DIAGRAM,
    n,
    data: DIAGRAM_BYTES.subarray(n * CHUNK, (n + 1) * CHUNK),
  })).reverse()
  writeFileSync(join(dir, 'rocketchat_uploads.chunks.bson'), bsonBytes(chunks))
  mkdirSync(fsDir(), { recursive: true })
  writeFileSync(join(fsDir(), `${SPEC}.pdf`), SPEC_BYTES)
})
afterAll(async () => {
  await s3?.close()
  rmSync(join(dir, '..'), { recursive: true, force: true })
})

describe('Rocket.Chat files re-hosted through the CLI', { timeout: 180_000 }, () => {
  it('GridFS chunks in the dump and the FileSystem store: every attachment in the store, hashing to the upload', async () => {
    const job = await rehostJob(suite, s3, { bucket: 'rocket', source: { connector: 'rocketchat', path: dir, files: { fileSystemPath: fsDir() } } })
    const run = await runCli(['run', '--config', job.cfg], job.env).done
    // 3 when the fixture's planted bad rows are rejected; no message waits for a file.
    expect([0, 3], run.stderr.slice(-3000)).toContain(run.code)
    expect(run.stderr).not.toMatch(/wait for .* file/)
    await expectEveryAttachmentRehosted(
      suite,
      job.app,
      s3,
      'rocket',
      new Map([
        ['diagram.png', DIAGRAM_BYTES],
        ['Spec v2.pdf', SPEC_BYTES],
      ]),
    )
    expect((await ledgerFilesAndReports(job.stateUrl)).states).toEqual({ copied: 2 })
    await expectNoSecrets(job.stateUrl, [s3.secretAccessKey], [run.stdout, run.stderr])
  })
})
