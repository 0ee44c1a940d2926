/**
 * The files benchmark's quota mode (issue 27: "with files, the import lane still reaches ≥ 0.97 of
 * the quota"): a real `chatferry run` (the CLI as a process) of a generic-sql history whose
 * messages carry a few hundred attachments on a local file host, under `files.mode: rehost` into
 * the s3rver test bucket, against the sandbox at a known quota. The import lane's quota efficiency
 * is read from the sandbox's request log as the loader benchmark reads it (loader-bench.ts
 * `quotaEfficiency`): items the import requests carried with a 200 in a window that starts at the
 * first message request ÷ (requests per minute × 50 × the window's minutes), and the 429s.
 *
 * The job is the files lane's CLI test job (test/helpers/files-job.ts), its quota raised to the
 * benchmark's in both the sandbox app and `target.quota`. Messages with files are spread through
 * the history (every `n`-th message), so packing meets held messages all along the load.
 */
import './bench-cli.ts'

import { readFileSync, writeFileSync } from 'node:fs'

import { parse, stringify } from 'yaml'

import { startSandbox } from '../../src/sandbox/index.ts'
import type { CliSuite } from '../helpers/cli-suite.ts'
import { pngBytes, startFileServer } from '../helpers/file-server.ts'
import { filesJob, type FilesMessage } from '../helpers/files-job.ts'
import { runCli } from '../helpers/ledger-fixtures.ts'
import { startS3Server } from '../helpers/s3-server.ts'
import { MGMT, testSecret } from '../helpers/secrets.ts'
import { benchDatabases } from './bench-databases.ts'

export interface FilesQuotaOptions {
  /** Sandbox and `target.quota` requests per minute. */
  readonly rpm: number
  /** Seconds measured from the first message request. */
  readonly seconds: number
  /** Distinct attachments (one per message that has one). */
  readonly files: number
  readonly fileKib: number
}

export async function filesQuotaEfficiency(o: FilesQuotaOptions): Promise<{ ratio: number; r429: number }> {
  const databases = benchDatabases()
  const sandbox = await startSandbox({ management: MGMT, state: { url: await databases.fresh('cf_bench_files_sbx'), poolSize: 5 } })
  const host = await startFileServer()
  const s3 = await startS3Server(['quota'])
  try {
    // Enough messages to keep the import lane busy past the window.
    const messageCount = Math.ceil(((o.rpm * 50) / 60) * (o.seconds + 30))
    const every = Math.max(1, Math.floor(messageCount / o.files))
    const messages: FilesMessage[] = []
    for (let lid = 1; lid <= messageCount; lid++) {
      const withFile = lid % every === 0 && lid / every <= o.files
      if (withFile) {
        host.files.set(`q/${lid}.png`, { bytes: pngBytes(o.fileKib * 1024), type: 'image/png' })
      }
      messages.push({ lid, files: withFile ? [`q/${lid}.png`] : [] })
    }
    let apps = 0
    const suite = {
      tsb: {
        sandbox,
        app: (settings: Record<string, unknown>) =>
          sandbox.createApp({ id: `fq${++apps}-${Date.now().toString(36)}`, apiKey: testSecret('apikey'), settings }),
      },
      freshDb: async (prefix: string) => ({ url: await databases.fresh(`${prefix}_bench`), name: prefix, drop: async () => {} }),
      dropAfter: () => {},
    } as unknown as CliSuite
    const job = await filesJob(suite, host, s3, {
      messages,
      bucket: 'quota',
      appSettings: { requestsPerMinute: o.rpm, windowMs: 60_000 },
      load: { quotaWindowMs: 60_000 },
    })
    const yaml = parse(readFileSync(job.cfg, 'utf8')) as { target: { quota: { requestsPerMinute: number } } }
    yaml.target.quota.requestsPerMinute = o.rpm
    writeFileSync(job.cfg, stringify(yaml))
    const started = performance.now()
    const run = runCli(['run', '--config', job.cfg], { ...job.env, CHATFERRY_LOG_LEVEL: 'warn' })
    const done = await run.done
    const runSeconds = (performance.now() - started) / 1000
    if (done.code !== 0) {
      throw new Error(`chatferry run exited ${done.code}: ${done.stderr.slice(-2000)}`)
    }
    await sandbox.whenIdle()
    const log = (await sandbox.requests(job.app.id)).filter((r) => ['users', 'groups', 'members', 'messages'].includes(r.endpoint))
    const first = Math.min(...log.filter((r) => r.endpoint === 'messages').map((r) => r.receivedAtMs))
    const inWindow = log.filter((r) => r.receivedAtMs >= first && r.receivedAtMs < first + o.seconds * 1000)
    const items = inWindow.filter((r) => r.status === 200).reduce((a, r) => a + (r.itemCount ?? 0), 0)
    const r429 = log.filter((r) => r.status === 429).length
    const ratio = items / (o.rpm * 50 * (o.seconds / 60))
    const copied = s3.requests.filter((r) => r.bucket === 'quota' && r.method === 'PUT' && r.status === 200).length
    const heads = s3.requests.filter((r) => r.bucket === 'quota' && r.method === 'HEAD').length
    process.stdout.write(
      `import lane with files (run, files.mode rehost): ${messageCount} messages, ${o.files} with a ${o.fileKib} KiB attachment; ` +
        `${o.seconds} s from the first message request at ${o.rpm} req/min: ${items} items ÷ ${o.rpm * 50 * (o.seconds / 60)} = ${ratio.toFixed(3)} ` +
        `(target ≥ 0.97) ${ratio >= 0.97 ? 'ok' : 'BELOW TARGET'} · ${inWindow.length} requests · 429s: ${r429} (target 0) · ` +
        `store: ${copied} PUTs, ${heads} HEADs · run ${runSeconds.toFixed(0)} s\n`,
    )
    return { ratio, r429 }
  } finally {
    await s3.close()
    await host.close()
    await sandbox.close()
    await databases.dropAll()
  }
}
