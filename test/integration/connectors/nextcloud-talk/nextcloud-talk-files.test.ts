/**
 * Nextcloud Talk's shared files (connectors/nextcloud-talk/files.ts, `source.files`), over the
 * Nextcloud fixture (test/fixtures/nextcloud-talk, Postgres) with the server's `oc_filecache` and
 * `oc_storages` rows for the shared file (share 7 → file id 991): in a home storage the locator is
 * `<uid>/<filecache.path>` under the data directory and the reader returns the exact bytes of
 * `<datadirectory>/alice/files/Talk/photo.jpg`, from an offset too; in an object store (S3 as
 * primary storage) it is the object `urn:oid:991` (s3rver). A file gone from the data directory is
 * `missing`, a path out of it `denied`; `files` without `siteUrl` is a configuration error.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { NextcloudTalkConfigSchema } from '../../../../connectors/nextcloud-talk/config.ts'
import { createNextcloudTalkConnector } from '../../../../connectors/nextcloud-talk/index.ts'
import { loadNextcloudFixture, openFixtureWriter } from '../../../fixtures/nextcloud-talk/load.ts'
import { attachmentsOf, openFailure, readRef, sha256 } from '../../../helpers/connector-files.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { type SourceBucket, startSourceBucket } from '../../../helpers/source-bucket.ts'

const PHOTO = randomBytes(30_000)
let db: TestDatabase
let bucket: SourceBucket
const root = mkdtempSync(join(tmpdir(), 'cf-nc-files-'))
const data = join(root, 'data')

/** The server tables the files need (Nextcloud core: oc_filecache, oc_storages), with the shared file in `storage`. */
async function placeFile(storage: string): Promise<void> {
  const w = await openFixtureWriter('postgres', db.url, 'oc_')
  await w.exec(
    'CREATE TABLE IF NOT EXISTS oc_storages (numeric_id bigserial PRIMARY KEY, id varchar(64), available integer NOT NULL DEFAULT 1, last_checked integer)',
  )
  await w.exec(
    'CREATE TABLE IF NOT EXISTS oc_filecache (fileid bigserial PRIMARY KEY, storage bigint NOT NULL, path varchar(4000), path_hash varchar(32) NOT NULL, parent bigint NOT NULL, name varchar(250), mimetype bigint NOT NULL, size bigint NOT NULL)',
  )
  await w.exec('DELETE FROM oc_filecache')
  await w.exec('DELETE FROM oc_storages')
  await w.exec('INSERT INTO oc_storages (numeric_id, id) VALUES (1, $1)', [storage])
  await w.exec(
    "INSERT INTO oc_filecache (fileid, storage, path, path_hash, parent, name, mimetype, size) VALUES (991, 1, 'files/Talk/photo.jpg', 'x', 0, 'photo.jpg', 0, 30000)",
  )
  await w.close()
}

beforeAll(async () => {
  db = await createTestDatabase('cf_nc_files')
  await loadNextcloudFixture('postgres', db.url)
  mkdirSync(join(data, 'alice/files/Talk'), { recursive: true })
  writeFileSync(join(data, 'alice/files/Talk/photo.jpg'), PHOTO)
  bucket = await startSourceBucket('nextcloud-primary')
  await bucket.put('urn:oid:991', PHOTO)
}, 60_000)

afterAll(async () => {
  await bucket?.stop()
  await db?.drop()
  rmSync(root, { recursive: true, force: true })
})

const connector = (files: unknown) =>
  createNextcloudTalkConnector(
    NextcloudTalkConfigSchema.parse({ connector: 'nextcloud-talk', url: db.url, siteUrl: 'https://cloud.example.com', files }),
  )

describe('Nextcloud Talk shared files', () => {
  it('home storage: the locator is <uid>/<filecache.path>; the reader returns the exact bytes, from an offset too', async () => {
    await placeFile('home::alice')
    const c = connector({ kind: 'local', directory: data })
    const found = await attachmentsOf(c)
    expect(found.map((f) => f.attachment.source)).toEqual([{ reader: 'nextcloud-talk', ref: 'alice/files/Talk/photo.jpg', host: 'local' }])
    const reader = c.files!()
    const whole = await readRef(reader, 'alice/files/Talk/photo.jpg')
    expect([whole.size, sha256(whole.bytes)]).toEqual([PHOTO.length, sha256(PHOTO)])
    const tail = await readRef(reader, 'alice/files/Talk/photo.jpg', 29_000)
    expect([tail.start, sha256(tail.bytes)]).toEqual([29_000, sha256(PHOTO.subarray(29_000))])
    expect((await openFailure(reader, 'alice/files/Talk/gone.jpg')).fileCause).toBe('missing')
    expect((await openFailure(reader, '../alice/files/Talk/photo.jpg')).fileCause).toBe('denied')
  })

  it('object store as primary storage: the object urn:oid:<fileid>, with Range', async () => {
    await placeFile('object::user:alice')
    const c = connector(bucket.settings)
    const found = await attachmentsOf(c)
    expect(found.map((f) => f.attachment.source?.ref)).toEqual(['urn:oid:991'])
    const reader = c.files!()
    const tail = await readRef(reader, 'urn:oid:991', 100)
    await reader.close?.()
    expect([tail.size, tail.start, sha256(tail.bytes)]).toEqual([PHOTO.length, 100, sha256(PHOTO.subarray(100))])
  })

  it('a storage the configured store does not hold gets no locator (a home storage with kind s3)', async () => {
    await placeFile('home::alice')
    expect((await attachmentsOf(connector(bucket.settings))).map((f) => f.attachment.source)).toEqual([undefined])
  })

  it('configuration: files without siteUrl is refused; a data directory that does not exist names the field', () => {
    const r = NextcloudTalkConfigSchema.safeParse({
      connector: 'nextcloud-talk',
      url: 'postgres://x@h/db',
      files: { kind: 'local', directory: data },
    })
    expect(r.success).toBe(false)
    expect(JSON.stringify(r.error?.issues)).toContain('siteUrl')
    expect(() => connector({ kind: 'local', directory: join(root, 'nope') }).files!()).toThrow(/source\.files\.directory: .*nope does not exist/)
  })
})
