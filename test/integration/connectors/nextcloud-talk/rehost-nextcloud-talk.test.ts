/**
 * Nextcloud Talk's shared files re-hosted end to end (issue 27): the Nextcloud fixture (Postgres)
 * with the server's `oc_storages`/`oc_filecache` rows placing the shared file (share 7 → file 991)
 * in alice's home storage, its bytes under the data directory (`source.files: {kind: local}`) →
 * `chatferry run` as a process with `files.mode: rehost` into an s3rver bucket → the sandbox. The
 * attachment on the sandbox points into the bucket and hashes to the file in the data directory;
 * the store's secret is in neither the ledger nor what the CLI printed.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { loadNextcloudFixture, openFixtureWriter } from '../../../fixtures/nextcloud-talk/load.ts'
import { useCliSuite } from '../../../helpers/cli-suite.ts'
import { expectEveryAttachmentRehosted, expectNoSecrets, jpegBytes, ledgerFilesAndReports, rehostJob } from '../../../helpers/connector-rehost.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { type S3TestServer, startS3Server } from '../../../helpers/s3-server.ts'

const PHOTO = jpegBytes(30_000)

const suite = useCliSuite()
let s3: S3TestServer
let url = ''
const data = join(mkdtempSync(join(tmpdir(), 'cf-nc-rehost-')), 'data')

beforeAll(async () => {
  s3 = await startS3Server(['nextcloud'])
  const db = await suite.freshDb('cf_nc_rehost_src')
  await loadNextcloudFixture('postgres', db.url)
  url = db.url
  // Nextcloud core's tables for the shared file: alice's home storage, the file's cache row.
  const w = await openFixtureWriter('postgres', db.url, 'oc_')
  await w.exec(
    'CREATE TABLE oc_storages (numeric_id bigserial PRIMARY KEY, id varchar(64), available integer NOT NULL DEFAULT 1, last_checked integer)',
  )
  await w.exec(
    'CREATE TABLE oc_filecache (fileid bigserial PRIMARY KEY, storage bigint NOT NULL, path varchar(4000), path_hash varchar(32) NOT NULL, parent bigint NOT NULL, name varchar(250), mimetype bigint NOT NULL, size bigint NOT NULL)',
  )
  await w.exec("INSERT INTO oc_storages (numeric_id, id) VALUES (1, 'home::alice')")
  await w.exec(
    `INSERT INTO oc_filecache (fileid, storage, path, path_hash, parent, name, mimetype, size) VALUES (991, 1, 'files/Talk/photo.jpg', 'x', 0, 'photo.jpg', 0, ${PHOTO.length})`,
  )
  await w.close()
  mkdirSync(join(data, 'alice/files/Talk'), { recursive: true })
  writeFileSync(join(data, 'alice/files/Talk/photo.jpg'), PHOTO)
}, 60_000)
afterAll(async () => {
  await s3?.close()
})

describe('Nextcloud Talk files re-hosted through the CLI', { timeout: 180_000 }, () => {
  it('a shared file in the data directory: the attachment in the store, hashing to the file', async () => {
    const job = await rehostJob(suite, s3, {
      bucket: 'nextcloud',
      source: { connector: 'nextcloud-talk', url, siteUrl: 'https://cloud.example.com', files: { kind: 'local', directory: data } },
    })
    const run = await runCli(['run', '--config', job.cfg], job.env).done
    // 3 when the fixture's planted bad rows are rejected; no message waits for a file.
    expect([0, 3], run.stderr.slice(-3000)).toContain(run.code)
    expect(run.stderr).not.toMatch(/wait for .* file/)
    await expectEveryAttachmentRehosted(suite, job.app, s3, 'nextcloud', new Map([['photo.jpg', PHOTO]]))
    expect((await ledgerFilesAndReports(job.stateUrl)).states).toEqual({ copied: 1 })
    await expectNoSecrets(job.stateUrl, [s3.secretAccessKey], [run.stdout, run.stderr])
  })
})
