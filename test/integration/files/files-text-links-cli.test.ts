/**
 * `files.rewriteTextLinks` end to end through the CLI as a process (issue 27): a generic-sql job
 * re-hosting into an s3rver bucket whose message texts name legacy file URLs. Proves: a message's
 * text naming its own attachment's legacy URL reaches the sandbox with the store's URL; a message
 * planned by a later run whose text names another message's copied file (and its own) gets both
 * rewritten; a URL that is no file of the job stays; `runs` counts the rewritten links; `verify`
 * (which compares the sampled texts) passes with exit 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { useCliSuite } from '../../helpers/cli-suite.ts'
import { type FileServer, pdfBytes, pngBytes, startFileServer } from '../../helpers/file-server.ts'
import { addFilesMessages, type FilesJob, filesJob } from '../../helpers/files-job.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { sandboxContents } from '../../helpers/run-e2e.ts'
import { type S3TestServer, startS3Server } from '../../helpers/s3-server.ts'

const suite = useCliSuite()
let host: FileServer
let s3: S3TestServer

beforeAll(async () => {
  host = await startFileServer()
  s3 = await startS3Server(['links'])
})
afterAll(async () => {
  await host?.close()
  await s3?.close()
})

/** The sandbox's messages by key: text and attachment URLs. */
async function platformMessages(job: FilesJob): Promise<{ key: string; text: string; urls: string[] }[]> {
  await suite.tsb.sandbox.whenIdle()
  return (await sandboxContents(suite.tsb.sandbox, job.app.id)).messages.map((m) => {
    const data = m.row.data as { attachments?: { url: string }[]; text?: string }
    return { key: m.key, text: data.text ?? '', urls: (data.attachments ?? []).map((a) => a.url) }
  })
}

const byLid = (messages: { key: string; text: string; urls: string[] }[], lid: number) =>
  messages.find((m) => m.key === String(lid) || m.key === `m${lid}` || m.key.endsWith(`_${lid}`))

describe('files.rewriteTextLinks through the CLI', { timeout: 180_000 }, () => {
  it('sends texts with the links to copied files rewritten, counts them, and verify passes', async () => {
    host.files.set('t1.png', { bytes: pngBytes(20_000), type: 'image/png' })
    host.files.set('t2.pdf', { bytes: pdfBytes(40_000), type: 'application/pdf' })
    const stranger = `${host.urlOf('t1.png')}-not-a-file`
    const job = await filesJob(suite, host, s3, {
      bucket: 'links',
      files: { rewriteTextLinks: true },
      messages: [
        { lid: 41, files: ['t1.png'], body: `here it is: ${host.urlOf('t1.png')}.` },
        { lid: 42, files: ['t2.pdf'], body: 'the pdf' },
      ],
    })
    const first = await runCli(['run', '--config', job.cfg], job.env).done
    expect(first.code, first.stderr.slice(-3000)).toBe(0)
    let onPlatform = await platformMessages(job)
    const t1 = byLid(onPlatform, 41)?.urls[0]
    const t2 = byLid(onPlatform, 42)?.urls[0]
    expect(t1?.startsWith(`${s3.publicBase('links')}/`), t1).toBe(true)
    expect(t2?.startsWith(`${s3.publicBase('links')}/`), t2).toBe(true)
    expect(byLid(onPlatform, 41)?.text).toBe(`here it is: ${t1}.`)

    // A later message names another message's copied file, its own attachment's, and a URL that is no file.
    host.files.set('t3.png', { bytes: pngBytes(25_000), type: 'image/png' })
    addFilesMessages(job, host, [{ lid: 43, files: ['t3.png'], body: `see ${host.urlOf('t2.pdf')} and (${host.urlOf('t3.png')}), not ${stranger}` }])
    const second = await runCli(['run', '--delta', '--reconcile-keys', '--config', job.cfg], job.env).done
    expect(second.code, second.stderr.slice(-3000)).toBe(0)
    onPlatform = await platformMessages(job)
    const m43 = byLid(onPlatform, 43)
    const t3 = m43?.urls[0]
    expect(t3?.startsWith(`${s3.publicBase('links')}/`), t3).toBe(true)
    expect(m43?.text).toBe(`see ${t2} and (${t3}), not ${stranger}`)
    expect(onPlatform.filter((m) => m.key === m43?.key)).toHaveLength(1)

    // The runs count the rewritten links: one in the first run, two in the second.
    const runs = JSON.parse((await runCli(['runs', '--config', job.cfg, '--json'], job.env).done).stdout) as {
      counts: Record<string, number>
    }[]
    const rewritten = runs.map((r) => r.counts.textLinksRewritten ?? 0).filter((n) => n > 0)
    expect(rewritten.sort()).toEqual([1, 2])

    // verify compares the sampled texts with the same rewrite: no mismatch.
    const verified = await runCli(['verify', '--config', job.cfg, '--json'], job.env).done
    expect(verified.code, verified.stdout.slice(-3000) + verified.stderr.slice(-2000)).toBe(0)
    const report = JSON.parse(verified.stdout) as { mismatches?: { unexplained?: number } }
    expect(JSON.stringify(report)).not.toContain('"field":"text"')
  })
})
