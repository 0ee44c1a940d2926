/**
 * Slack's files re-hosted end to end (issue 27): the Slack export fixture as a folder carrying one
 * file (`__uploads/F01SHOT/shot.png`, as slack-advanced-exporter and slackdump put them) and a
 * message whose file is only on Slack (`url_private` on a local HTTP host playing
 * files.slack.com, which serves it only with the operator's `source.fileToken` as a bearer token
 * and its login page otherwise) → `chatferry run` as a process with `files.mode: rehost` into an
 * s3rver bucket → the sandbox. Every attachment on the sandbox points into the bucket and hashes
 * to the source's bytes; the file host saw only the operator's token, never the export's; neither
 * token nor the store's secret is in the ledger's files, reports or runs, nor in what the CLI printed.
 */
import { mkdtempSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { exportFiles, writeExportFolder } from '../../../fixtures/slack-export/generate.ts'
import { EXPORT_TOKEN, SL, slackSeed, ts } from '../../../fixtures/slack-export/seed.ts'
import { useCliSuite } from '../../../helpers/cli-suite.ts'
import { expectEveryAttachmentRehosted, expectNoSecrets, ledgerFilesAndReports, rehostJob } from '../../../helpers/connector-rehost.ts'
import { pdfBytes, pngBytes } from '../../../helpers/file-server.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { type S3TestServer, startS3Server } from '../../../helpers/s3-server.ts'
import { testSecret } from '../../../helpers/secrets.ts'

const FILE_TOKEN = testSecret('slack-file-token')
const SHOT = pngBytes(2048)
const REMOTE = pdfBytes(70_000)

const suite = useCliSuite()
let s3: S3TestServer
let server: Server
let base = ''
const seen: { path: string; headers: IncomingHttpHeaders }[] = []
let folder = ''

/** The fixture's export plus the shot carried in `__uploads` and a message whose file is only on the (local) Slack host. */
function exportWithFiles(): Map<string, string | Buffer> {
  const files: Map<string, string | Buffer> = new Map(exportFiles(slackSeed()))
  const day = [...files.entries()].find(([, text]) => typeof text === 'string' && text.includes('F01SHOT'))![0]
  const list = JSON.parse(files.get(day) as string) as unknown[]
  list.push({
    type: 'message',
    user: SL.alice,
    ts: ts(905),
    text: 'the remote report',
    files: [
      {
        id: 'F04REM',
        name: 'remote.pdf',
        title: 'remote.pdf',
        mimetype: 'application/pdf',
        filetype: 'pdf',
        size: REMOTE.length,
        mode: 'hosted',
        url_private: `${base}/files-pri/T01ACME-F04REM/remote.pdf?t=${EXPORT_TOKEN}`,
      },
    ],
  })
  files.set(day, JSON.stringify(list))
  files.set('__uploads/F01SHOT/shot.png', SHOT)
  return files
}

beforeAll(async () => {
  s3 = await startS3Server(['slack'])
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    seen.push({ path: req.url ?? '', headers: req.headers })
    if (req.headers.authorization !== `Bearer ${FILE_TOKEN}`) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><title>Sign in to Slack</title>')
      return
    }
    if (path !== '/files-pri/T01ACME-F04REM/remote.pdf') {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(REMOTE.length) }).end(REMOTE)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  folder = writeExportFolder(join(mkdtempSync(join(tmpdir(), 'cf-slack-rehost-')), 'export'), exportWithFiles())
})
afterAll(async () => {
  await new Promise((r) => server?.close(r))
  await s3?.close()
})

describe('Slack export files re-hosted through the CLI', { timeout: 180_000 }, () => {
  it('files carried in the export and url_private read with the operator token: every attachment in the store, hashing to the source', async () => {
    const job = await rehostJob(suite, s3, {
      bucket: 'slack',
      source: { connector: 'slack-export', path: folder, fileToken: '${CHATFERRY_TEST_SLACK_TOKEN}' },
      env: { CHATFERRY_TEST_SLACK_TOKEN: FILE_TOKEN },
    })
    const run = await runCli(['run', '--config', job.cfg], job.env).done
    // 3: the fixture's planted bad rows are rejected; no message waits for a file.
    expect([0, 3], run.stderr.slice(-3000)).toContain(run.code)
    expect(run.stderr).not.toMatch(/wait for .* file/)
    await expectEveryAttachmentRehosted(
      suite,
      job.app,
      s3,
      'slack',
      new Map([
        ['shot.png', SHOT],
        ['remote.pdf', REMOTE],
      ]),
    )
    expect((await ledgerFilesAndReports(job.stateUrl)).states).toEqual({ copied: 2 })
    // The file host was asked once, with the operator's token, and never saw the export's.
    expect(seen.map((s) => [s.path, s.headers.authorization])).toEqual([['/files-pri/T01ACME-F04REM/remote.pdf', `Bearer ${FILE_TOKEN}`]])
    await expectNoSecrets(job.stateUrl, [FILE_TOKEN, EXPORT_TOKEN, s3.secretAccessKey], [run.stdout, run.stderr])
  })
})
