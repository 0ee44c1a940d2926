/**
 * What `status` costs a load that holds the embedded store (issue 25 item 5): the holder answers
 * `status` on its socket (src/cli/status-socket.ts), on its one PGlite connection between its own
 * queries. Each round loads the same ledger twice into the sandbox at no quota — once alone, once
 * with `status` asked every second — in alternating order, and prints the load's items/s and the
 * loader process's CPU seconds both ways (the ratios are the cost; CPU is the steadier of the two
 * on a shared machine), the socket's answer time while loading, and the wall time of a whole
 * `chatferry status` process (node start included) while loading. First, with nothing else running
 * in it, how long one answer holds a ledger of that size (`readStatus`, 20 times): the share of
 * the holder's one connection a `status` a second takes.
 *
 * `node test/bench/status-during-load-bench.ts [--rounds 3] [--messages 20000] [--only answer]` (or
 * `npm run bench -- status-during-load …`). Needs nothing but this checkout: the ledger is embedded, the sandbox's
 * state too.
 */
import './bench-cli.ts'

import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { readStatus } from '../../src/cli/status-readings.ts'
import { askStatus, statusSocketPath } from '../../src/cli/status-socket.ts'
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts'
import { type LedgerStore, openLedger } from '../../src/state/store.ts'
import { messages, runCli, users, writeConfig } from '../helpers/ledger-fixtures.ts'

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? Number(process.argv[i + 1]) : fallback
}
const rounds = arg('--rounds', 3)
const nMessages = arg('--messages', 20_000)
const onlyAnswer = process.argv.includes('--only') && process.argv[process.argv.indexOf('--only') + 1] === 'answer'

interface LoadResult {
  readonly itemsPerSecond: number
  readonly cpuSeconds: number
  readonly answersMs: number[]
  readonly cliMs: number[]
}

/** The process's CPU seconds so far (user + system), sampled until it exits: the last sample. */
function cpuWatcher(pid: number): { stop(): number } {
  let last = 0
  const read = () => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
      last = (Number(fields[11]) + Number(fields[12])) / 100
    } catch {
      // gone
    }
  }
  const t = setInterval(read, 100)
  return { stop: () => (clearInterval(t), last) }
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN
}

/** A ledger in `dir` with job `tag`: 20 users and `nMessages` messages planned. */
async function seed(dir: string, tag: string, appId: string): Promise<LedgerStore> {
  const store = await openLedger({ dir })
  await store.ensureJob(tag, appId)
  await store.planItems(tag, 'users', users(20))
  for (let i = 0; i < nMessages; i += 5000) {
    await store.planItems(
      tag,
      'messages',
      messages(Math.min(5000, nMessages - i), 20).map((m, j) => ({ ...m, legacyId: `m${i + j}`, targetKey: `m${i + j}` })),
    )
  }
  return store
}

/** How long one status answer holds the ledger (nothing else running on it). */
async function answerCost(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cf-status-bench-'))
  try {
    const store = await seed(dir, 'answer', 'app')
    const ms: number[] = []
    try {
      for (let i = 0; i < 21; i++) {
        const a = performance.now()
        await readStatus(store, { jobId: 'answer', runs: 5, rejects: 0 })
        if (i > 0) {
          ms.push(performance.now() - a)
        }
      }
    } finally {
      await store.close()
    }
    console.log(
      `one status answer on an embedded ledger of ${nMessages} messages: p50 ${quantile(ms, 0.5).toFixed(0)} ms, ` +
        `p95 ${quantile(ms, 0.95).toFixed(0)} ms (${ms.length} answers, the first not counted)`,
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** One load of `nMessages` (+20 users) on a fresh embedded ledger; `poll`: ask status every second meanwhile. */
async function oneLoad(sb: Sandbox, tag: string, poll: boolean): Promise<LoadResult> {
  const app = await sb.createApp({ id: tag, settings: { requestsPerMinute: 1_000_000, windowMs: 60_000 } })
  const base = mkdtempSync(join(tmpdir(), 'cf-status-bench-'))
  const dir = join(base, '.chatferry')
  try {
    const seeded = Date.now()
    const store = await seed(dir, tag, app.id)
    await store.close()
    console.log(
      `  ${tag}: ${nMessages} messages planned in ${((Date.now() - seeded) / 1000).toFixed(1)} s; loading${poll ? ', status every 1 s' : ''}`,
    )
    const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateDir: dir, requestsPerMinute: 100_000, timeoutMs: 30_000 })
    const load = runCli(['load', '--config', cfg, '--job', tag], { CHATFERRY_LOG_LEVEL: 'info' })
    const cpu = cpuWatcher(load.child.pid as number)
    await load.waitFor('loader started', 120_000)
    const t0 = Date.now()
    const answersMs: number[] = []
    const cliMs: number[] = []
    let loading = true
    const poller = (async () => {
      let n = 0
      while (poll && loading) {
        await new Promise((r) => setTimeout(r, 1000))
        if (!loading) {
          break
        }
        const a = Date.now()
        try {
          if (++n % 4 === 0) {
            // Every fourth second a whole `status` process, as an operator runs it.
            const res = await runCli(['status', '--config', cfg, '--job', tag, '--json']).done
            if (res.code === 0) {
              cliMs.push(Date.now() - a)
            }
          } else {
            await askStatus(statusSocketPath(dir), { jobId: tag, runs: 5, rejects: 0 })
            answersMs.push(Date.now() - a)
          }
        } catch {
          // The load ended between the look and the question.
        }
      }
    })()
    const res = await load.done
    const cpuSeconds = cpu.stop()
    loading = false
    await poller
    const seconds = (Date.now() - t0) / 1000
    if (res.code !== 0) {
      throw new Error(`load exited ${res.code}: ${res.stderr.slice(-1000)}`)
    }
    return { itemsPerSecond: (nMessages + 20) / seconds, cpuSeconds, answersMs, cliMs }
  } finally {
    rmSync(base, { recursive: true, force: true })
  }
}

await answerCost()
const sb = onlyAnswer ? undefined : await startSandbox()
try {
  if (sb === undefined) {
    process.exit(0)
  }
  const plain: number[] = []
  const polled: number[] = []
  const plainCpu: number[] = []
  const polledCpu: number[] = []
  const answers: number[] = []
  const clis: number[] = []
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first: a machine that gets busier favours neither.
    for (const poll of r % 2 === 0 ? [false, true] : [true, false]) {
      const got = await oneLoad(sb, `sb${r}${poll ? 'p' : 'a'}`, poll)
      ;(poll ? polled : plain).push(got.itemsPerSecond)
      ;(poll ? polledCpu : plainCpu).push(got.cpuSeconds)
      answers.push(...got.answersMs)
      clis.push(...got.cliMs)
      console.log(
        `round ${r + 1} ${poll ? 'status every 1 s' : 'alone          '}: ${got.itemsPerSecond.toFixed(0)} items/s, loader CPU ${got.cpuSeconds.toFixed(1)} s` +
          (poll ? ` · ${got.answersMs.length} socket answers, ${got.cliMs.length} status processes` : ''),
      )
    }
  }
  const ratios = plain.map((p, i) => (polled[i] ?? NaN) / p)
  const cpuRatios = plainCpu.map((p, i) => (polledCpu[i] ?? NaN) / p)
  console.log(
    `load of ${nMessages} messages, embedded ledger, ${rounds} rounds: alone ${plain.map((x) => x.toFixed(0)).join(', ')} items/s; ` +
      `with status every 1 s ${polled.map((x) => x.toFixed(0)).join(', ')} items/s; ratio per round ${ratios.map((x) => x.toFixed(3)).join(', ')}; ` +
      `loader CPU alone ${plainCpu.map((x) => x.toFixed(1)).join(', ')} s, with status ${polledCpu.map((x) => x.toFixed(1)).join(', ')} s, ratio ${cpuRatios.map((x) => x.toFixed(3)).join(', ')}`,
  )
  console.log(
    `status socket answer while loading: p50 ${quantile(answers, 0.5)} ms, p95 ${quantile(answers, 0.95)} ms, max ${Math.max(...answers)} ms (${answers.length} answers); ` +
      `whole \`status --json\` process: p50 ${quantile(clis, 0.5)} ms, max ${Math.max(...clis)} ms (${clis.length})`,
  )
} finally {
  await sb?.close()
}
