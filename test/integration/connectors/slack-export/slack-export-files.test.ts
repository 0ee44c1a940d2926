/**
 * Slack's files (connectors/slack-export: files-locator.ts, files-reader.ts), over the Slack
 * fixture (test/fixtures/slack-export) written as a folder and as a ZIP nested in one folder, with
 * files the way export tools carry them: `__uploads/<id>/<name>` (slack-advanced-exporter,
 * slackdump's default) and `<channel>/attachments/<id>-<name>` with `url_private` rewritten to that
 * relative path (slackdump "standard"). Each attachment carries the right locator and the reader
 * returns the exact bytes (SHA-256), from an offset too; a file the export lacks is `missing`, a
 * path out of it or a symbolic link `denied`. A file only on Slack is read from `url_private` (a
 * local HTTP server playing files.slack.com) with `source.fileToken` as a bearer token — the
 * export's own token removed from the ref and never sent — and a login page served instead
 * comes back as `text/html`. Without `fileToken` such a file has no locator.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { type SlackExportConfigInput, SlackExportConfigSchema } from '../../../../connectors/slack-export/config.ts'
import { createSlackExportConnector } from '../../../../connectors/slack-export/index.ts'
import { exportFiles, writeExportFolder, writeExportZip } from '../../../fixtures/slack-export/generate.ts'
import { EXPORT_TOKEN, SL, slackSeed, ts } from '../../../fixtures/slack-export/seed.ts'
import { attachmentsOf, bytesOf, openFailure, readRef, sha256 } from '../../../helpers/connector-files.ts'

const USER_TOKEN = 'xoxp-operator-token-for-tests'
const DAY = 'general/2024-01-02.json'
const SHOT = randomBytes(2048)
const REPORT = randomBytes(300_000)
const REMOTE = randomBytes(50_000)

const root = mkdtempSync(join(tmpdir(), 'cf-slack-files-'))
let server: Server
let base = ''
const seen: IncomingHttpHeaders[] = []

/** The fixture's files plus: the shot in `__uploads`, a slackdump-standard file, a file only on Slack, a missing one. */
function filesWithUploads(): Map<string, string | Buffer> {
  const files: Map<string, string | Buffer> = new Map(exportFiles(slackSeed()))
  const day = JSON.parse(files.get(DAY) as string) as unknown[]
  const file = (id: string, name: string, url: string, size: number) => ({
    id,
    name,
    mimetype: 'application/octet-stream',
    filetype: 'bin',
    size,
    mode: 'hosted',
    url_private: url,
  })
  day.push(
    {
      type: 'message',
      user: SL.alice,
      ts: ts(900),
      text: 'report',
      files: [file('F03STD', 'report.pdf', 'attachments/F03STD-report.pdf', REPORT.length)],
    },
    {
      type: 'message',
      user: SL.alice,
      ts: ts(901),
      text: 'remote',
      files: [file('F04REM', 'remote.bin', `${base}/files-pri/T01ACME-F04REM/remote.bin?t=${EXPORT_TOKEN}`, REMOTE.length)],
    },
    {
      type: 'message',
      user: SL.alice,
      ts: ts(902),
      text: 'login',
      files: [file('F05LOG', 'login.bin', `${base}/files-pri/T01ACME-F05LOG/login.bin?t=${EXPORT_TOKEN}`, 10)],
    },
  )
  files.set(DAY, JSON.stringify(day))
  files.set('__uploads/F01SHOT/shot.png', SHOT)
  files.set('general/attachments/F03STD-report.pdf', REPORT)
  return files
}

let folderPath = ''
let zipPath = ''

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers)
    const path = new URL(req.url ?? '/', 'http://x').pathname
    if (path.endsWith('/login.bin') || req.headers.authorization !== `Bearer ${USER_TOKEN}`) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><title>Sign in to Slack</title>')
      return
    }
    if (!path.endsWith('/remote.bin')) {
      res.writeHead(404).end()
      return
    }
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '')
    const from = m === null ? 0 : Number(m[1])
    res
      .writeHead(m === null ? 200 : 206, {
        'content-type': 'application/octet-stream',
        'content-length': String(REMOTE.length - from),
        ...(m === null ? {} : { 'content-range': `bytes ${from}-${REMOTE.length - 1}/${REMOTE.length}` }),
      })
      .end(REMOTE.subarray(from))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const files = filesWithUploads()
  folderPath = writeExportFolder(join(root, 'export'), files)
  writeFileSync(join(root, 'outside.png'), 'not in the export')
  mkdirSync(join(folderPath, '__uploads/F06LNK'), { recursive: true })
  symlinkSync(join(root, 'outside.png'), join(folderPath, '__uploads/F06LNK/link.png'))
  zipPath = await writeExportZip(join(root, 'Acme Slack export.zip'), files, { nestedIn: 'Acme Slack export' })
})

afterAll(async () => {
  await new Promise((r) => server.close(r))
  rmSync(root, { recursive: true, force: true })
})

const connector = (path: string, extra: Partial<SlackExportConfigInput> = {}) =>
  createSlackExportConnector(SlackExportConfigSchema.parse({ connector: 'slack-export', path, ...extra }))

describe.each([
  ['folder', () => folderPath],
  ['ZIP', () => zipPath],
])('Slack export files, %s', (_layout, pathOf) => {
  it('files inside the export get their path there; url_private gets the URL without the export token', async () => {
    const found = await attachmentsOf(connector(pathOf(), { fileToken: USER_TOKEN }))
    const byName = new Map(found.map((f) => [f.attachment.name, f.attachment.source]))
    expect(byName.get('shot.png')).toEqual({ reader: 'slack-export', ref: '__uploads/F01SHOT/shot.png', host: 'local' })
    expect(byName.get('report.pdf')).toEqual({ reader: 'slack-export', ref: 'general/attachments/F03STD-report.pdf', host: 'local' })
    const remote = byName.get('remote.bin')
    expect(remote).toEqual({ reader: 'slack-export', ref: `${base}/files-pri/T01ACME-F04REM/remote.bin`, host: new URL(base).host })
    expect(JSON.stringify(found)).not.toContain(EXPORT_TOKEN)
  })

  it('without fileToken, a file only on Slack has no locator; files in the export still have theirs', async () => {
    const found = await attachmentsOf(connector(pathOf()))
    const byName = new Map(found.map((f) => [f.attachment.name, f.attachment.source]))
    expect(byName.get('remote.bin')).toBeUndefined()
    expect(byName.get('shot.png')?.ref).toBe('__uploads/F01SHOT/shot.png')
  })

  it('the reader returns the exact bytes of files in the export, and resumes from an offset', async () => {
    const reader = connector(pathOf()).files!()
    try {
      const shot = await readRef(reader, '__uploads/F01SHOT/shot.png')
      expect([shot.size, shot.start, sha256(shot.bytes)]).toEqual([SHOT.length, 0, sha256(SHOT)])
      const report = await readRef(reader, 'general/attachments/F03STD-report.pdf', 123_457)
      expect([report.size, report.start, sha256(report.bytes)]).toEqual([REPORT.length, 123_457, sha256(REPORT.subarray(123_457))])
    } finally {
      await reader.close?.()
    }
  })

  it('a file not in the export is missing; a path out of it is denied', async () => {
    const reader = connector(pathOf()).files!()
    try {
      expect((await openFailure(reader, '__uploads/F99/none.png')).fileCause).toBe('missing')
      for (const ref of ['../outside.png', '__uploads/../../outside.png', join(root, 'outside.png')]) {
        expect((await openFailure(reader, ref)).fileCause, ref).toBe('denied')
      }
    } finally {
      await reader.close?.()
    }
  })
})

describe('Slack export files: symbolic links and url_private', () => {
  it('a symbolic link in the export folder is denied, never followed', async () => {
    const reader = connector(folderPath).files!()
    const e = await openFailure(reader, '__uploads/F06LNK/link.png')
    await reader.close?.()
    expect(e.fileCause).toBe('denied')
    expect(e.message).toContain('symbolic link')
  })

  it('url_private is read with the operator token, to its host only, and resumes with Range', async () => {
    seen.length = 0
    const reader = connector(folderPath, { fileToken: USER_TOKEN }).files!()
    const ref = `${base}/files-pri/T01ACME-F04REM/remote.bin`
    const whole = await readRef(reader, ref)
    expect([whole.size, sha256(whole.bytes)]).toEqual([REMOTE.length, sha256(REMOTE)])
    const tail = await readRef(reader, ref, 40_000)
    expect([tail.start, sha256(tail.bytes)]).toEqual([40_000, sha256(REMOTE.subarray(40_000))])
    expect(seen.map((h) => h.authorization)).toEqual([`Bearer ${USER_TOKEN}`, `Bearer ${USER_TOKEN}`])
    expect(JSON.stringify(seen)).not.toContain(EXPORT_TOKEN)
  })

  it("Slack's login page served instead of the file comes back as text/html (the checks refuse it)", async () => {
    const reader = connector(folderPath, { fileToken: USER_TOKEN }).files!()
    const f = await reader.open(`${base}/files-pri/T01ACME-F05LOG/login.bin`)
    expect(f.contentType).toMatch(/^text\/html/)
    expect((await bytesOf(f.body)).toString()).toContain('Sign in to Slack')
  })

  it('a URL ref without fileToken is denied naming the setting; no request is made', async () => {
    seen.length = 0
    const e = await openFailure(connector(folderPath).files!(), `${base}/files-pri/T01ACME-F04REM/remote.bin`)
    expect(e.fileCause).toBe('denied')
    expect(e.message).toContain('source.fileToken')
    expect(seen).toEqual([])
  })

  it('an export path that does not exist is a configuration error naming source.path', () => {
    expect(() => connector(join(root, 'nope.zip')).files!()).toThrow(/source\.path: .*nope\.zip does not exist/)
  })
})
