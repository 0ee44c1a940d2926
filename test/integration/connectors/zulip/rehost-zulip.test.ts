/**
 * Zulip's files re-hosted end to end (issue 27): the Zulip fixture (Postgres, realm `acme`, archived
 * messages read) with its attachments' `path_id`s under `LOCAL_UPLOADS_DIR/files`
 * (`source.files: {kind: local}`) → `chatferry run` as a process with `files.mode: rehost` into an
 * s3rver bucket → the sandbox. Every attachment on the sandbox points into the bucket and hashes to
 * the uploaded file; the store's secret is in neither the ledger nor what the CLI printed.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { loadZulipFixture } from '../../../fixtures/zulip/load.ts'
import { useCliSuite } from '../../../helpers/cli-suite.ts'
import { expectEveryAttachmentRehosted, expectNoSecrets, ledgerFilesAndReports, rehostJob } from '../../../helpers/connector-rehost.ts'
import { pdfBytes, pngBytes } from '../../../helpers/file-server.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { type S3TestServer, startS3Server } from '../../../helpers/s3-server.ts'

/** The fixture's live attachments (path_id → name and bytes of the size zerver_attachment states). */
const FILES: Record<string, { name: string; bytes: Buffer }> = {
  '2/ab/cdEF/logo.png': { name: 'logo.png', bytes: pngBytes(2048) },
  '2/ef/ghIJ/minutes.pdf': { name: 'minutes.pdf', bytes: pdfBytes(4096) },
}

const suite = useCliSuite()
let s3: S3TestServer
let url = ''
const uploads = join(mkdtempSync(join(tmpdir(), 'cf-zulip-rehost-')), 'uploads')

beforeAll(async () => {
  s3 = await startS3Server(['zulip'])
  const db = await suite.freshDb('cf_zulip_rehost_src')
  await loadZulipFixture(db.url)
  url = db.url
  for (const [path, f] of Object.entries(FILES)) {
    mkdirSync(dirname(join(uploads, 'files', path)), { recursive: true })
    writeFileSync(join(uploads, 'files', path), f.bytes)
  }
}, 60_000)
afterAll(async () => {
  await s3?.close()
})

describe('Zulip files re-hosted through the CLI', { timeout: 180_000 }, () => {
  it('path_id under the uploads directory: every attachment in the store, hashing to the upload', async () => {
    const job = await rehostJob(suite, s3, {
      bucket: 'zulip',
      source: { connector: 'zulip', url, realm: 'acme', archivedMessages: 'read', files: { kind: 'local', directory: uploads } },
    })
    const run = await runCli(['run', '--config', job.cfg], job.env).done
    // 3 when the fixture's planted bad rows are rejected; no message waits for a file.
    expect([0, 3], run.stderr.slice(-3000)).toContain(run.code)
    expect(run.stderr).not.toMatch(/wait for .* file/)
    // minutes.pdf belongs to a message Bob deleted (archived): skipped by the deletes policy, not sent.
    const sources = new Map(
      Object.values(FILES)
        .filter((f) => f.name !== 'minutes.pdf')
        .map((f) => [f.name, f.bytes]),
    )
    await expectEveryAttachmentRehosted(suite, job.app, s3, 'zulip', sources)
    expect((await ledgerFilesAndReports(job.stateUrl)).states).toEqual({ copied: 1 })
    await expectNoSecrets(job.stateUrl, [s3.secretAccessKey], [run.stdout, run.stderr])
  })
})
