/**
 * Slack archive benchmark: the peak RSS of `chatferry plan` (runPlan, as the CLI runs it, against
 * a Postgres ledger) on a Slack export ZIP with one day file of 1 GiB uncompressed (target: peak
 * RSS ≤ 600 MB), with the connector's default caps. Two exports, generated once into
 * `<tmpdir>/cf-bench-slack-archive/` and reused (`--regenerate` rebuilds them):
 * - `bomb`: the day file is one message whose text is 1 GiB of one letter — a ZIP bomb, about
 *   1 MiB on disk; the element is over `maxElementBytes` and becomes one problem;
 * - `messages` (`--variant messages`; slow: it plans some 2 million messages): the day file is 1 GiB
 *   of ordinary messages, streamed element by element.
 * Each plan runs in its own child process, so peaks don't mix.
 *
 *   node test/bench/slack-archive-bench.ts [--variant bomb|messages|bomb,messages] [--gib 1] [--regenerate]
 *   npm run bench -- slack-archive
 */
import './bench-cli.ts'

import { spawnSync } from 'node:child_process'
import { createWriteStream, existsSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

import yazl from 'yazl'

import { openCommandContext } from '../../src/cli/open-command-context.ts'
import { runPlan } from '../../src/job/run-plan.ts'
import { freshBenchJob, withBenchAdmin as admin } from './mattermost-bench-db.ts'

const args = process.argv.slice(2)
const flag = (name: string) => args.includes(`--${name}`)
const value = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const GIB = Number(value('gib') ?? 1)
const BYTES = Math.round(GIB * 1024 ** 3)
const T0S = 1_704_186_000
const uid = (i: number) => `U${String(i).padStart(8, '0')}`

type Variant = 'bomb' | 'messages'
const zipOf = (variant: Variant) => join(tmpdir(), 'cf-bench-slack-archive', `${variant}-${GIB}gib.zip`)

/** The big day file's bytes, generated as they are compressed: never held. */
async function* dayFile(variant: Variant): AsyncGenerator<Buffer> {
  const chunk = 1024 * 1024
  if (variant === 'bomb') {
    yield Buffer.from(`[{"type":"message","user":"${uid(1)}","ts":"${T0S}.000100","text":"`)
    const block = Buffer.alloc(chunk, 'a')
    for (let n = 0; n < BYTES; n += chunk) {
      yield n + chunk <= BYTES ? block : block.subarray(0, BYTES - n)
    }
    yield Buffer.from('"}]')
    return
  }
  yield Buffer.from('[')
  let written = 1
  let parts: string[] = []
  for (let k = 0; written < BYTES; k++) {
    const m = {
      client_msg_id: `c${k}`,
      type: 'message',
      user: uid(k % 500),
      ts: `${T0S + Math.floor(k / 100)}.${String(k % 100).padStart(6, '0')}`,
      text: `message ${k} in the usual chatter of a very busy day, with a mention of <@${uid((k * 7) % 500)}>`,
      team: 'T01ACME',
      // Slack repeats the text as rich-text blocks: about 600 bytes a message, as in real exports.
      blocks: [
        {
          type: 'rich_text',
          block_id: `b${k}`,
          elements: [
            {
              type: 'rich_text_section',
              elements: [
                { type: 'text', text: `message ${k} in the usual chatter of a very busy day, with a mention of` },
                { type: 'user', user_id: uid((k * 7) % 500) },
              ],
            },
          ],
        },
      ],
    }
    const text = `${k === 0 ? '' : ','}\n    ${JSON.stringify(m)}`
    written += Buffer.byteLength(text)
    parts.push(text)
    if (parts.length === 2000) {
      yield Buffer.from(parts.join(''))
      parts = []
    }
  }
  yield Buffer.from(`${parts.join('')}\n]`)
}

async function generate(variant: Variant): Promise<void> {
  const path = zipOf(variant)
  if (existsSync(path) && !flag('regenerate')) {
    return
  }
  mkdirSync(join(path, '..'), { recursive: true })
  const zip = new yazl.ZipFile()
  const users = Array.from({ length: 500 }, (_, i) => ({ id: uid(i), name: `user${i}`, real_name: `User ${i}`, updated: T0S }))
  zip.addBuffer(Buffer.from(JSON.stringify(users)), 'users.json')
  const members = users.slice(0, 30).map((u) => u.id)
  zip.addBuffer(Buffer.from(JSON.stringify([{ id: 'C00000001', name: 'general', created: T0S - 86_400, creator: uid(0), members }])), 'channels.json')
  zip.addBuffer(
    Buffer.from(JSON.stringify([{ type: 'message', user: uid(2), ts: `${T0S - 3600}.000100`, text: 'the day before' }])),
    'general/2024-01-01.json',
  )
  zip.addReadStream(Readable.from(dayFile(variant)), 'general/2024-01-02.json', { compressionLevel: variant === 'bomb' ? 9 : 6 })
  zip.end()
  await pipeline(zip.outputStream, createWriteStream(`${path}.part`))
  rmSync(path, { force: true })
  spawnSync('mv', [`${path}.part`, path])
}

async function child(variant: Variant): Promise<void> {
  const stateName = `cf_bench_slack_archive_${variant}`
  const { dir, cfg } = await freshBenchJob(stateName, 'chatferry-slack-archive-bench', {
    source: { connector: 'slack-export', path: zipOf(variant) },
    policies: { retention: { retentionDays: 100_000 } },
  })
  const baseRssMb = process.resourceUsage().maxRSS / 1024
  const started = performance.now()
  const ctx = await openCommandContext({ config: cfg })
  try {
    const r = await runPlan(ctx, { outDir: dir })
    const ms = performance.now() - started
    const e = r.report.entities.messages
    const peakRssMb = process.resourceUsage().maxRSS / 1024
    process.stdout.write(`${JSON.stringify({ variant, rows: e.sourceRows, rejected: e.problems, ms, peakRssMb, baseRssMb })}\n`)
  } finally {
    await ctx.close()
    rmSync(dir, { recursive: true, force: true })
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${stateName} WITH (FORCE)`))
  }
}

async function main(): Promise<void> {
  if (flag('child')) {
    return child(value('child') as Variant)
  }
  const variants = (value('variant') ?? 'bomb').split(',') as Variant[]
  for (const variant of variants) {
    const t = performance.now()
    await generate(variant)
    const { statSync } = await import('node:fs')
    process.stdout.write(
      `${variant}: ${zipOf(variant)} (${(statSync(zipOf(variant)).size / 1024 ** 2).toFixed(1)} MiB on disk, day file ${GIB} GiB inflated; ready in ${((performance.now() - t) / 1000).toFixed(1)} s)\n`,
    )
    const r = spawnSync(process.execPath, [import.meta.filename, '--child', variant, '--gib', String(GIB)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    if (r.status !== 0) {
      throw new Error(`bench child ${variant} failed: ${r.stdout}`)
    }
    const res = JSON.parse(r.stdout.trim().split('\n').pop() as string) as {
      rows: number
      rejected: number
      ms: number
      peakRssMb: number
      baseRssMb: number
    }
    process.stdout.write(
      `${variant}: chatferry plan read ${res.rows.toLocaleString('en')} message rows (${res.rejected} rejected) in ${(res.ms / 1000).toFixed(1)} s; peak RSS ${res.peakRssMb.toFixed(0)} MB (${res.baseRssMb.toFixed(0)} MB before the plan; target ≤ 600 MB)\n`,
    )
  }
}

await main()
