/**
 * The files lane end to end through the CLI as a process (issue 27): a generic-sql legacy file
 * whose messages carry attachments on a local file host, re-hosted into an s3rver bucket, loaded
 * into the sandbox. Proves: every attachment on the sandbox points into the store and its bytes
 * hash to the source's; a SIGKILL during a download and during a multipart upload, then a rerun,
 * leave every file written to the store once (the store's own request log) and every message on
 * the platform once (the sandbox); a store that refuses writes stops the run with a clear error
 * and loses nothing; the store's secret is never in the ledger or what the CLI printed.
 */
import { mkdtempSync, readdirSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

import pg from 'pg'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { openCommandContext } from '../../../src/cli/open-command-context.ts'
import { openJobFiles } from '../../../src/job/run-job-files.ts'
import type { FilesPlan } from '../../../src/report/files-plan.ts'
import { useCliSuite } from '../../helpers/cli-suite.ts'
import { type FileServer, pdfBytes, pngBytes, sha256, startFileServer } from '../../helpers/file-server.ts'
import { type FilesJob, filesJob, type FilesMessage, setFilesConfig } from '../../helpers/files-job.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { sandboxContents } from '../../helpers/run-e2e.ts'
import { type S3TestServer, startS3Server } from '../../helpers/s3-server.ts'
import { importRaw, seedUsers } from '../../helpers/sandbox.ts'

const suite = useCliSuite()
let host: FileServer
let s3: S3TestServer

beforeAll(async () => {
  host = await startFileServer()
  s3 = await startS3Server(['e2e', 'killdl', 'killmp', 'refuse', 'policy', 'original', 'prepared'])
})
afterAll(async () => {
  await host?.close()
  await s3?.close()
})

interface SentAttachment {
  readonly url: string
  readonly name: string
  readonly size?: string
  readonly mimeType: string
}

/** The messages on the sandbox by muid: how many rows each has, and their attachments. */
async function platformMessages(job: FilesJob): Promise<Map<string, { rows: number; attachments: SentAttachment[]; text: string }>> {
  await suite.tsb.sandbox.whenIdle()
  const out = new Map<string, { rows: number; attachments: SentAttachment[]; text: string }>()
  for (const m of (await sandboxContents(suite.tsb.sandbox, job.app.id)).messages) {
    const data = m.row.data as { attachments?: SentAttachment[]; text?: string }
    const seen = out.get(m.key)
    out.set(m.key, { rows: (seen?.rows ?? 0) + 1, attachments: data.attachments ?? [], text: data.text ?? '' })
  }
  return out
}

/** The ledger's files table as text, and its states. */
async function ledgerFiles(job: FilesJob): Promise<{ text: string; states: Record<string, number> }> {
  const c = new pg.Client({ connectionString: job.stateUrl })
  await c.connect()
  try {
    const rows = await c.query<{ t: string; state: string }>(`select row_to_json(f)::text as t, state from chatferry.files f`)
    const states: Record<string, number> = {}
    for (const r of rows.rows) {
      states[r.state] = (states[r.state] ?? 0) + 1
    }
    return { text: rows.rows.map((r) => r.t).join('\n'), states }
  } finally {
    await c.end()
  }
}

/** Every attachment on the platform points into the bucket and its bytes hash to the source file's. */
async function expectRehosted(job: FilesJob, messages: readonly FilesMessage[], bucket: string): Promise<void> {
  const onPlatform = await platformMessages(job)
  for (const m of messages) {
    const sent = onPlatform.get(String(m.lid)) ?? [...onPlatform.entries()].find(([k]) => k.endsWith(`_${m.lid}`) || k === `m${m.lid}`)?.[1]
    expect(sent, `message ${m.lid} on the platform`).toBeDefined()
    expect(sent?.rows, `message ${m.lid} once`).toBe(1)
    expect(sent?.attachments.map((a) => a.name)).toEqual(m.files)
    for (const [i, a] of (sent?.attachments ?? []).entries()) {
      const source = host.files.get(m.files[i] as string)
      expect(a.url.startsWith(`${s3.publicBase(bucket)}/`), a.url).toBe(true)
      const body = Buffer.from(await (await fetch(a.url)).arrayBuffer())
      expect(sha256(body), `${m.files[i]} through ${a.url}`).toBe(sha256(source!.bytes))
      expect(a.size).toBe(String(source!.bytes.length))
    }
  }
}

/** Each object the bucket holds was written once (PutObject or CompleteMultipartUpload answered 200). */
function expectWrittenOnce(bucket: string): number {
  const keys = new Set(s3.requests.filter((r) => r.bucket === bucket && r.key.startsWith('sha256/')).map((r) => r.key))
  for (const key of keys) {
    expect(s3.writesOf(bucket, key), `${bucket}/${key} writes`).toBe(1)
  }
  return keys.size
}

describe('files lane through the CLI', { timeout: 180_000 }, () => {
  it('re-hosts every attachment, checksummed, and each message points at its copy', async () => {
    host.files.set('a.png', { bytes: pngBytes(30_000), type: 'image/png' })
    host.files.set('b.pdf', { bytes: pdfBytes(120_000), type: 'application/pdf' })
    host.files.set('big.pdf', { bytes: pdfBytes(9 * 1024 * 1024 + 17), type: 'application/pdf' })
    const messages: FilesMessage[] = [
      { lid: 1, files: ['a.png'] },
      { lid: 2, files: [] },
      { lid: 3, files: ['b.pdf', 'a.png'] },
      { lid: 4, files: ['big.pdf'] },
      { lid: 5, files: ['a.png'] },
    ]
    const job = await filesJob(suite, host, s3, { messages, bucket: 'e2e' })
    // The dry run inventories the files and estimates the files lane beside the load.
    const planned = await runCli(['plan', '--config', job.cfg, '--json', '--out', join(job.dir, 'reports')], job.env).done
    expect(planned.code, planned.stderr.slice(-2000)).toBe(0)
    const files = (JSON.parse(planned.stdout) as { files: FilesPlan }).files
    const sizes = ['a.png', 'b.pdf', 'big.pdf'].map((f) => host.files.get(f)!.bytes.length)
    expect(files).toMatchObject({ mode: 'rehost', files: 3, bytes: sizes.reduce((a, b) => a + b), unknownSize: 0, overMaxBytes: { files: 0 } })
    expect(files.largest[0]?.name).toBe('big.pdf')
    expect(files.byType.map((t) => [t.type, t.files])).toEqual([
      ['application/pdf', 2],
      ['image/png', 1],
    ])
    expect(files.estimate?.seconds).toBeGreaterThan(0)
    const run = await runCli(['run', '--config', job.cfg], job.env).done
    expect(run.code, run.stderr.slice(-3000)).toBe(0)
    await expectRehosted(job, messages, 'e2e')
    // Three distinct files, each written once (a.png is shared by three messages); big.pdf went up in parts.
    expect(expectWrittenOnce('e2e')).toBe(3)
    expect(s3.requests.some((r) => r.bucket === 'e2e' && r.query.partNumber !== undefined)).toBe(true)
    // verify: every copy answers in the store, and each (a sample of 100 > 3) hashes to its record.
    const verified = await runCli(['verify', '--config', job.cfg, '--json', '--out', join(job.dir, 'reports')], job.env).done
    expect(verified.code, verified.stderr.slice(-2000)).toBe(0)
    expect((JSON.parse(verified.stdout) as { files: unknown }).files).toEqual({
      copied: 3,
      reachable: 3,
      sampleRequested: 100,
      sampleHashed: 3,
      notCopied: { failed: 0, skipped: 0, planned: 0 },
      problems: [],
    })
    // A copy the store no longer serves fails the verify, naming it.
    const gone = s3.requests.find((r) => r.bucket === 'e2e' && r.key.startsWith('sha256/') && r.key.endsWith('.png'))!.key
    s3.fail = (method, key) => (method === 'HEAD' && key === gone ? 503 : undefined)
    const broken = await runCli(['verify', '--config', job.cfg, '--json', '--out', join(job.dir, 'reports')], job.env).done
    s3.fail = undefined
    expect(broken.code).toBe(3)
    expect((JSON.parse(broken.stdout) as { files: { problems: unknown[] } }).files.problems).toEqual([
      { name: 'a.png', url: `${s3.publicBase('e2e')}/${gone}`, problem: 'HTTP 503' },
    ])
    const ledger = await ledgerFiles(job)
    expect(ledger.states).toEqual({ copied: 3 })
    expect(ledger.text).not.toContain(s3.secretAccessKey)
    expect(run.stdout + run.stderr).not.toContain(s3.secretAccessKey)
  })

  it('a SIGKILL while a file downloads, then a rerun: every file written once, every message once', async () => {
    host.files.set('slow.pdf', { bytes: pdfBytes(3 * 1024 * 1024), type: 'application/pdf', slowBytesPerSecond: 512 * 1024 })
    host.files.set('c.png', { bytes: pngBytes(50_000), type: 'image/png' })
    const messages: FilesMessage[] = [
      { lid: 11, files: ['c.png'] },
      { lid: 12, files: ['slow.pdf'] },
      { lid: 13, files: [] },
    ]
    const spoolDir = mkdtempSync(join(tmpdir(), 'cf-spool-'))
    const job = await filesJob(suite, host, s3, { messages, bucket: 'killdl', files: { spoolDir } })
    const first = runCli(['run', '--config', job.cfg], job.env)
    // Killed once its spool part holds a good share of the file (3 MiB at 512 KiB/s), whatever the
    // machine's load: a fixed sleep could end before a starved process had written a byte.
    const spooled = () => readdirSync(spoolDir).reduce((n, f) => n + (f.endsWith('.part') ? statSync(join(spoolDir, f)).size : 0), 0)
    const until = Date.now() + 60_000
    while (spooled() < 512 * 1024 && Date.now() < until) {
      await sleep(20)
    }
    first.child.kill('SIGKILL')
    const killed = await first.done
    expect(killed.signal).toBe('SIGKILL')
    expect(
      host.requests.some((r) => r.name === 'slow.pdf' && r.status === 200),
      'the download had not finished',
    ).toBe(false)
    expect((await ledgerFiles(job)).states.planned).toBe(1)
    const fast = host.files.get('slow.pdf')!
    host.files.set('slow.pdf', { bytes: fast.bytes, type: fast.type })
    const again = await runCli(['run', '--config', job.cfg], job.env).done
    expect(again.code, again.stderr.slice(-3000)).toBe(0)
    await expectRehosted(job, messages, 'killdl')
    expect(expectWrittenOnce('killdl')).toBe(2)
    // The rerun went on from the bytes spooled before the kill.
    expect(host.requests.filter((r) => r.name === 'slow.pdf').map((r) => r.range)).toEqual([expect.stringMatching(/^bytes=[1-9]\d*-$/)])
  })

  it('a SIGKILL during a multipart upload, then a rerun: the file is written once', async () => {
    host.files.set('huge.pdf', { bytes: pdfBytes(11 * 1024 * 1024), type: 'application/pdf' })
    const messages: FilesMessage[] = [{ lid: 21, files: ['huge.pdf'] }]
    const job = await filesJob(suite, host, s3, { messages, bucket: 'killmp' })
    // The upload cannot complete while the test holds it: it starts (the first POST) and its parts
    // go up, but its completion (every later POST) is refused.
    let posts = 0
    s3.fail = (method, key) => (method === 'POST' && key.startsWith('sha256/') && ++posts > 1 ? 503 : undefined)
    const first = runCli(['run', '--config', job.cfg], job.env)
    const until = Date.now() + 60_000
    while (!s3.requests.some((r) => r.bucket === 'killmp' && r.query.partNumber !== undefined) && Date.now() < until) {
      await sleep(10)
    }
    first.child.kill('SIGKILL')
    const killed = await first.done
    s3.fail = undefined
    expect(posts, 'the upload was started').toBeGreaterThanOrEqual(1)
    expect(killed.signal).toBe('SIGKILL')
    expect(s3.writesOf('killmp', s3.requests.find((r) => r.bucket === 'killmp' && r.query.partNumber !== undefined)!.key)).toBe(0)
    const again = await runCli(['run', '--config', job.cfg], job.env).done
    expect(again.code, again.stderr.slice(-3000)).toBe(0)
    await expectRehosted(job, messages, 'killmp')
    expect(expectWrittenOnce('killmp')).toBe(1)
  })

  it('a store that refuses writes stops the run with a clear error; nothing is lost and the next run finishes', async () => {
    host.files.set('d.png', { bytes: pngBytes(40_000), type: 'image/png' })
    const messages: FilesMessage[] = [
      { lid: 31, files: ['d.png'] },
      { lid: 32, files: [] },
    ]
    const job = await filesJob(suite, host, s3, { messages, bucket: 'refuse' })
    s3.fail = (method, key) => (method === 'PUT' && key.startsWith('sha256/') ? 403 : undefined)
    const refused = await runCli(['run', '--config', job.cfg], job.env).done
    s3.fail = undefined
    expect(refused.code, refused.stderr.slice(-3000)).not.toBe(0)
    expect(refused.stdout + refused.stderr).toMatch(/file store .* (unavailable|failed)/)
    expect(refused.stdout + refused.stderr).not.toContain(s3.secretAccessKey)
    // The file was handed back untried, and its message waits for it.
    const ledger = await ledgerFiles(job)
    expect(ledger.states).toEqual({ planned: 1 })
    expect(ledger.text).toMatch(/"attempts":0/)
    expect([...(await platformMessages(job)).keys()].some((k) => k.includes('31'))).toBe(false)
    const again = await runCli(['run', '--config', job.cfg], job.env).done
    expect(again.code, again.stderr.slice(-3000)).toBe(0)
    await expectRehosted(job, messages, 'refuse')
  })

  it("a run applies files.onFailure before any lane starts: the import lane never reads a failed file's old policy", async () => {
    host.files.set('lost.png', { bytes: Buffer.alloc(0), type: 'image/png', serve: 'missing' })
    const job = await filesJob(suite, host, s3, {
      messages: [{ lid: 61, files: ['lost.png'] }],
      bucket: 'prepared',
      files: { onFailure: 'wait', attempts: 1 },
    })
    const held = await runCli(['run', '--config', job.cfg], job.env).done
    expect(held.code, held.stderr.slice(-3000)).toBe(3)
    // Opened as a run opens it, before its lanes run: the ledger already says what they must do.
    const opened = async (onFailure: string) => {
      setFilesConfig(job.cfg, { onFailure })
      const saved = { ...process.env }
      Object.assign(process.env, job.env)
      const ctx = await openCommandContext({ config: job.cfg }).finally(() => {
        process.env = saved
      })
      try {
        const files = await openJobFiles(ctx, pino({ level: 'silent' }), new AbortController().signal)
        await files?.close()
        return { drained: await ctx.store.batches.drained(ctx.jobId), states: (await ledgerFiles(job)).states }
      } finally {
        await ctx.close()
      }
    }
    // Under note the held message is not drained (the import lane sends it); under wait the file is planned again.
    expect(await opened('note')).toEqual({ drained: false, states: { failed: 1 } })
    expect(await opened('wait')).toEqual({ drained: false, states: { planned: 1 } })
  })

  it('a file missing or served as a login page: wait holds its message, note sends it naming the file, link-original keeps the legacy URL', async () => {
    host.files.set('ok.png', { bytes: pngBytes(20_000), type: 'image/png' })
    host.files.set('gone.png', { bytes: Buffer.alloc(0), type: 'image/png', serve: 'missing' })
    host.files.set('login.pdf', { bytes: Buffer.alloc(0), type: 'application/pdf', serve: 'login-page' })
    const messages: FilesMessage[] = [
      { lid: 41, files: ['ok.png'] },
      { lid: 42, files: ['gone.png'] },
      { lid: 43, files: ['login.pdf', 'ok.png'] },
    ]
    const job = await filesJob(suite, host, s3, { messages, bucket: 'policy', files: { onFailure: 'wait', attempts: 1 } })
    // Under reference, plan samples the legacy URLs: the missing one does not answer (a login page does).
    setFilesConfig(job.cfg, { mode: 'reference' })
    const referenced = await runCli(['plan', '--config', job.cfg, '--json', '--out', join(job.dir, 'reports')], job.env).done
    const reference = (JSON.parse(referenced.stdout) as { files: FilesPlan }).files
    expect(reference.reachability).toMatchObject({ checked: 3, reachable: 2, failures: [{ url: host.urlOf('gone.png'), problem: 'HTTP 404' }] })
    expect(reference.warnings.join('\n')).toMatch(/break when the legacy system is switched off/)
    setFilesConfig(job.cfg, { mode: 'rehost' })
    const held = await runCli(['run', '--config', job.cfg], job.env).done
    // Finished, but two messages wait for files: not a success.
    expect(held.code, held.stderr.slice(-3000)).toBe(3)
    expect(held.stdout + held.stderr).toMatch(/2 message\(s\) wait for 2 file\(s\)/)
    expect([...(await platformMessages(job)).keys()].sort()).toEqual(['41'])
    const status = JSON.parse((await runCli(['status', '--config', job.cfg, '--json'], job.env).done).stdout) as { files: Record<string, number> }
    expect(status.files).toMatchObject({ copied: 1, failed: 2, failedWaiting: 2, waitingMessages: 2 })
    const failuresRun = await runCli(['files', 'failures', '--config', job.cfg, '--json'], job.env).done
    expect(failuresRun.code, failuresRun.stderr).toBe(0)
    const failures = JSON.parse(failuresRun.stdout) as {
      name: string
      lastErrorCause: string
      messages: number
    }[]
    expect(failures.map((f) => [f.name, f.lastErrorCause, f.messages]).sort()).toEqual([
      ['gone.png', 'missing', 1],
      ['login.pdf', 'expired-credentials', 1],
    ])
    // The next run under `note` applies it to the files already failed: their messages go with a note.
    setFilesConfig(job.cfg, { onFailure: 'note' })
    const noted = await runCli(['run', '--config', job.cfg], job.env).done
    expect(noted.code, noted.stderr.slice(-3000)).toBe(0)
    const onPlatform = await platformMessages(job)
    expect(onPlatform.get('42')).toMatchObject({ rows: 1, attachments: [], text: 'line 42\n\n[file not migrated: gone.png]' })
    expect(onPlatform.get('43')?.text).toBe('line 43\n\n[file not migrated: login.pdf]')
    expect(onPlatform.get('43')?.attachments.map((a) => a.name)).toEqual(['ok.png'])
    const map = (await runCli(['files', 'map', '--csv', '--config', job.cfg], job.env).done).stdout.trim().split('\n')
    expect(map[0]).toBe('legacy_url,url,bytes,sha256,name')
    expect(map.slice(1)).toEqual([
      `${host.urlOf('ok.png')},${onPlatform.get('41')?.attachments[0]?.url},20000,${sha256(host.files.get('ok.png')!.bytes)},ok.png`,
    ])

    const original = await filesJob(suite, host, s3, {
      messages: [{ lid: 51, files: ['gone.png', 'ok.png'] }],
      bucket: 'original',
      files: { onFailure: 'link-original', attempts: 1 },
    })
    const linked = await runCli(['run', '--config', original.cfg], original.env).done
    expect(linked.code, linked.stderr.slice(-3000)).toBe(0)
    const sent = (await platformMessages(original)).get('51')
    expect(sent?.attachments.map((a) => a.url)).toEqual([
      host.urlOf('gone.png'),
      `${s3.publicBase('original')}/${sent?.attachments[1]?.url.split(`${s3.publicBase('original')}/`)[1]}`,
    ])
    expect(sent?.attachments[1]?.url.startsWith(s3.publicBase('original'))).toBe(true)
  })

  it('a sandbox with checkAttachmentUrls refuses a message whose attachment does not answer, so a rehearsal shows the broken link', async () => {
    host.files.set('here.png', { bytes: pngBytes(1000), type: 'image/png' })
    const messages: FilesMessage[] = [
      { lid: 61, files: ['here.png'] },
      { lid: 62, files: ['gone.png'] },
    ]
    const job = await filesJob(suite, host, s3, {
      messages,
      bucket: 'original',
      files: { mode: 'reference' },
      appSettings: { checkAttachmentUrls: true },
    })
    const run = await runCli(['run', '--config', job.cfg], job.env).done
    expect(run.code, run.stderr.slice(-3000)).toBe(3)
    expect([...(await platformMessages(job)).keys()]).toEqual(['61'])
    const rejects = JSON.parse((await runCli(['rejects', '--config', job.cfg, '--json'], job.env).done).stdout) as {
      legacyId: string
      code: string
      message: string
    }[]
    // Refused alone: under the platform's message semantics (a bad row makes the request a 500) the
    // reject carries ERR_EXCEPTION; the sandbox's own answer to the row alone names the URL.
    expect(rejects.map((r) => r.legacyId)).toEqual(['62'])
    const kind = await suite.tsb.app({ checkAttachmentUrls: true, badRow500: [] })
    await seedUsers(kind, ['1', '2'])
    const probe = (url: string) => ({
      muid: 'probe',
      sender: '1',
      receiverType: 'user',
      receiver: '2',
      category: 'message',
      type: 'image',
      sentAt: Math.floor(Date.now() / 1000),
      data: { attachments: [{ url, name: 'x.png', mimeType: 'image/png', extension: 'png' }] },
    })
    const alone = await importRaw(kind, 'messages', { messages: { probe: probe(host.urlOf('gone.png')) } })
    expect(JSON.stringify(alone.body)).toContain('ERR_ATTACHMENT_UNREACHABLE')
    expect(JSON.stringify(alone.body)).toContain(`${host.urlOf('gone.png')} is not reachable (HTTP 404)`)
    const fine = await importRaw(kind, 'messages', { messages: { probe: probe(host.urlOf('here.png')) } })
    expect(JSON.stringify(fine.body)).not.toContain('ERR_ATTACHMENT_UNREACHABLE')
  })
})
