/**
 * Mattermost's files re-hosted end to end (issue 27): the Mattermost fixture (Postgres) with its
 * FileInfo files in a local data directory (`source.files: {kind: local}`) → `chatferry run` as a
 * process with `files.mode: rehost` into an s3rver bucket → the sandbox. Every attachment on the
 * sandbox points into the bucket and its bytes, read back through its URL, hash to the data
 * directory's file; the store's secret is in neither the ledger nor what the CLI printed. A data
 * directory that does not exist is a configuration error (exit 2) naming `source.files.directory`
 * before any file is copied.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type { FilesPlan } from '../../../../src/report/files-plan.ts'
import { loadMattermostFixture } from '../../../fixtures/mattermost/load.ts'
import { useCliSuite } from '../../../helpers/cli-suite.ts'
import { expectEveryAttachmentRehosted, expectNoSecrets, jpegBytes, ledgerFilesAndReports, rehostJob } from '../../../helpers/connector-rehost.ts'
import { pdfBytes, pngBytes } from '../../../helpers/file-server.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { type S3TestServer, startS3Server } from '../../../helpers/s3-server.ts'

/** The fixture's live files (FileInfo.Path → bytes of the size FileInfo states). */
const DIR = '20240115/teams/t01eng/channels/c01town/users'
const FILES: Record<string, { name: string; bytes: Buffer }> = {
  [`${DIR}/u01alice/f01img/diagram.png`]: { name: 'diagram.png', bytes: pngBytes(2048) },
  [`${DIR}/u01alice/f02doc/Q1 plan.pdf`]: { name: 'Q1 plan.pdf', bytes: pdfBytes(40960) },
  [`${DIR}/u02bob/f03img/cat.jpg`]: { name: 'cat.jpg', bytes: jpegBytes(1024) },
}

const suite = useCliSuite()

/** `plan --json`'s files section. */
async function planFiles(cfg: string, env: Record<string, string>): Promise<FilesPlan> {
  const planned = await runCli(['plan', '--config', cfg, '--json'], env).done
  expect(planned.code, planned.stderr.slice(-2000)).toBe(0)
  return (JSON.parse(planned.stdout) as { files: FilesPlan }).files
}
let s3: S3TestServer
let url: string
const dataDir = join(mkdtempSync(join(tmpdir(), 'cf-mm-rehost-')), 'data')

beforeAll(async () => {
  s3 = await startS3Server(['mm', 'mm-nodir'])
  const source = await suite.freshDb('cf_mm_rehost_src')
  await loadMattermostFixture('postgres', source.url)
  url = source.url
  for (const [path, f] of Object.entries(FILES)) {
    mkdirSync(dirname(join(dataDir, path)), { recursive: true })
    writeFileSync(join(dataDir, path), f.bytes)
  }
}, 60_000)
afterAll(async () => {
  await s3?.close()
})

describe('Mattermost files re-hosted through the CLI', { timeout: 180_000 }, () => {
  it('every attachment on the sandbox points into the store and hashes to its data-directory file', async () => {
    const job = await rehostJob(suite, s3, { bucket: 'mm', source: { connector: 'mattermost', url, files: { kind: 'local', directory: dataDir } } })
    // The dry run finds every file readable.
    expect((await planFiles(job.cfg, job.env)).unreadable).toEqual({ files: 0, readers: [] })
    const run = await runCli(['run', '--config', job.cfg], job.env).done
    // 3: the fixture's planted bad rows are rejected; no message waits for a file (that would be logged).
    expect(run.code, run.stderr.slice(-3000)).toBe(3)
    expect(run.stderr).not.toMatch(/wait for .* file/)
    const sources = new Map(Object.values(FILES).map((f) => [f.name, f.bytes]))
    const attachments = await expectEveryAttachmentRehosted(suite, job.app, s3, 'mm', sources)
    expect(attachments).toHaveLength(3)
    expect((await ledgerFilesAndReports(job.stateUrl)).states).toEqual({ copied: 3 })
    await expectNoSecrets(job.stateUrl, [s3.secretAccessKey], [run.stdout, run.stderr])
  })

  it('a data directory that does not exist is a configuration error naming source.files.directory; nothing is copied', async () => {
    const missing = join(dataDir, 'no-such-dir')
    const job = await rehostJob(suite, s3, {
      bucket: 'mm-nodir',
      source: { connector: 'mattermost', url, files: { kind: 'local', directory: missing } },
    })
    const run = await runCli(['run', '--config', job.cfg], job.env).done
    expect(run.code, run.stderr.slice(-3000)).toBe(2)
    expect(run.stderr).toMatch(/source\.files\.directory: .*no-such-dir does not exist/)
    expect(s3.requests.filter((r) => r.bucket === 'mm-nodir' && r.key.startsWith('sha256/'))).toEqual([])
    expect((await ledgerFilesAndReports(job.stateUrl)).states).toEqual({ planned: 3 })
  })
})
