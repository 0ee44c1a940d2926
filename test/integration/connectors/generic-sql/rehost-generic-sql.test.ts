/**
 * An in-house schema's files re-hosted end to end (issue 27): the generic-sql fixture (SQLite)
 * whose `chat_lines.files` JSON names each file's `path` under an uploads directory
 * (`source.files: {kind: local, field: path}`; one path relative, one absolute inside the
 * directory, one file shared by two messages) → `chatferry run` as a process with
 * `files.mode: rehost` into an s3rver bucket → the sandbox. Every attachment on the sandbox points
 * into the bucket and hashes to the file under the directory; the shared file is written once;
 * the store's secret is in neither the ledger nor what the CLI printed.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { genericSourceConfig, loadGenericSqlFixture, openGenericWriter } from '../../../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../../../helpers/cli-suite.ts'
import { expectEveryAttachmentRehosted, expectNoSecrets, ledgerFilesAndReports, rehostJob } from '../../../helpers/connector-rehost.ts'
import { pdfBytes, pngBytes } from '../../../helpers/file-server.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { type S3TestServer, startS3Server } from '../../../helpers/s3-server.ts'

const dir = mkdtempSync(join(tmpdir(), 'cf-generic-rehost-'))
const uploads = join(dir, 'uploads')
const url = `sqlite:${join(dir, 'legacy.db')}`
const CHART = pngBytes(123)
const BIG = pdfBytes(500_000)

const suite = useCliSuite()
let s3: S3TestServer

beforeAll(async () => {
  s3 = await startS3Server(['generic'])
  await loadGenericSqlFixture('sqlite', url)
  const w = await openGenericWriter('sqlite', url)
  const chart = { url: 'https://files.example.com/a/chart.png', mimeType: 'image/png', size: CHART.length, path: '2024/03/chart.png' }
  const big = { url: 'https://files.example.com/a/big.pdf', mimeType: 'application/pdf', size: BIG.length, path: join(uploads, '2024/03/big.pdf') }
  await w.exec(`UPDATE chat_lines SET files = '${JSON.stringify([chart, big])}' WHERE lid = 7`)
  await w.exec(`UPDATE chat_lines SET files = '${JSON.stringify([chart])}' WHERE lid = 4`)
  await w.close()
  mkdirSync(join(uploads, '2024/03'), { recursive: true })
  writeFileSync(join(uploads, '2024/03/chart.png'), CHART)
  writeFileSync(join(uploads, '2024/03/big.pdf'), BIG)
})
afterAll(async () => {
  await s3?.close()
})

describe('generic-sql files re-hosted through the CLI', { timeout: 180_000 }, () => {
  it('a path column under a directory: every attachment in the store, hashing to the file', async () => {
    const source = { ...genericSourceConfig(url), files: { kind: 'local', field: 'path', directory: uploads } }
    const job = await rehostJob(suite, s3, { bucket: 'generic', source })
    const run = await runCli(['run', '--config', job.cfg], job.env).done
    // 3: the fixture's planted bad rows are rejected; no message waits for a file.
    expect([0, 3], run.stderr.slice(-3000)).toContain(run.code)
    expect(run.stderr).not.toMatch(/wait for .* file/)
    const attachments = await expectEveryAttachmentRehosted(
      suite,
      job.app,
      s3,
      'generic',
      new Map([
        ['chart.png', CHART],
        ['big.pdf', BIG],
      ]),
    )
    expect(attachments).toHaveLength(3)
    expect((await ledgerFilesAndReports(job.stateUrl)).states).toEqual({ copied: 2 })
    // The chart shared by two messages went into the store once.
    const keys = new Set(s3.requests.filter((r) => r.bucket === 'generic' && r.key.startsWith('sha256/')).map((r) => r.key))
    expect([...keys].map((k) => s3.writesOf('generic', k))).toEqual([1, 1])
    await expectNoSecrets(job.stateUrl, [s3.secretAccessKey], [run.stdout, run.stderr])
  })
})
