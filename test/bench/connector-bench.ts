/**
 * Connector benchmark: one legacy system's messages read two ways in the same run:
 * - raw: the system's own raw read of the same data (a `COPY` for SQL sources, `JSON.parse` of
 *   export files, BSON deserialisation of a dump): the ceiling for reading these rows;
 * - chatferry: the connector's pages → canonical records → `mapMessage` (zod-validated import
 *   items; falls back to a canonical check when mappings/ is absent).
 * Prints rows/s for both, how busy this process was during its read (near 100%: bound by our CPU,
 * not the source), their ratio (no target: issue 26 retired it for the floor's below) and the peak
 * RSS of each size (target: flat within 50 MB between 100k and 1M). Each size runs in its own child process, so peaks don't mix.
 * Both reads are measured warm: chatferry's first read (JIT and heap still warming up, its CPU
 * time printed too) gives the peak RSS, before anything else has grown the heap (file systems warm
 * the OS file cache with a bare byte read, `warm`; the others, a database's cache, with the raw
 * read in a process of its own); the raw read runs once untimed; then chatferry's read, the raw
 * read and the validation floor run in turn `--repeats` times (default 3) and each one's best run
 * is kept, so a machine whose speed drifts weighs on all three alike.
 * It also prints a floor: what validating the mapped items alone costs per row (`validationCost`),
 * which with the raw read bounds the ratio any pipeline that validates every item can reach.
 * Beside each wall time it records the CPU time this process spent (`process.cpuUsage`: all its
 * threads, the database server's work not counted): on a shared, loaded machine the wall times
 * mostly measure how much of a core the scheduler gave each phase, the CPU times what it cost.
 *
 *   node test/bench/connector-bench.ts [--system mattermost] [--sizes 100000,1000000] [--page-size 1000] [--repeats 3] [--v8-defaults] [--v8-flag F] [--quick] [--live-heap] [--baseline DIR] [--rounds N]
 *   npm run bench -- connector --system mattermost
 *
 * `--baseline DIR` (another checkout of chatferry, e.g. `git worktree add /tmp/base main`) runs
 * that checkout's children beside this one's, alternating, `--rounds` times (default 1), and prints
 * the median ratios of each side by side: a before/after in one run on a busy machine.
 *
 * The systems are the modules in test/bench/connector/ (listed in `systems.ts`); each keeps its
 * generated fixtures for later runs, and `--regenerate` rebuilds them. SQL fixtures live on the
 * Postgres server `TEST_DATABASE_URL` or postgres://postgres@127.0.0.1:5432/postgres.
 */
import { spawnSync } from 'node:child_process'

import { createConnector, SourceConfigSchema } from '../../connectors/index.ts'
import type { LegacyMessage } from '../../src/model/records.ts'
import { DEFAULT_PAGE_SIZE } from '../../src/plan/plan-run.ts'
import { childNodeFlags, childV8Args, setChildRuntimeV8Flags } from './child-v8-flags.ts'
import type { ConnectorBenchSystem, RawRead } from './connector/system.ts'
import { BENCH_SYSTEMS } from './connector/systems.ts'

const args = process.argv.slice(2)
const flag = (name: string) => args.includes(`--${name}`)
const value = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
// chatferry's own default (src/plan/plan-run.ts, connectors/sql/paged-read.ts): the product as it runs.
const pageSize = Number(value('page-size') ?? DEFAULT_PAGE_SIZE)
/** Interleaved runs of the three timed phases in each child (chatferry, raw, validation); the best of each is kept. */
const repeats = Math.max(1, Number(value('repeats') ?? 3))
/** The children's V8 flags: chatferry's (child-v8-flags.ts). */
const v8Flags = childNodeFlags(args)

const systemName = value('system') ?? 'mattermost'

async function loadSystem(): Promise<ConnectorBenchSystem> {
  const load = BENCH_SYSTEMS[systemName]
  if (load === undefined) {
    process.stderr.write(`no connector benchmark for --system ${systemName}; there are: ${Object.keys(BENCH_SYSTEMS).join(', ')}\n`)
    process.exit(2)
  }
  return (await load()).default
}

type Check = (m: LegacyMessage) => boolean

/** CPU ms this process spent (user + system, every thread) since `start`. */
const cpuMsSince = (start: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(start)
  return (c.user + c.system) / 1000
}

interface Mapper {
  readonly name: string
  readonly check: Check
  /** The mapped items' payloads of a record, and their validation alone (for the floor). */
  readonly payloads?: (m: LegacyMessage) => readonly unknown[]
  readonly validate?: (payload: unknown) => boolean
}

async function mapper(): Promise<Mapper> {
  try {
    const m = await import('../../mappings/index.ts')
    // Planned users and groups are looked up in maps, as a plan does (src/plan/known-records.ts:
    // the ledger's planned rows, loaded once); here each is planned on its first lookup, with the
    // id policy (Slack's `U0123` ids are not platform ids as they are). Thread parents are computed
    // on every lookup: a plan keeps only the page's.
    const planned = <T>(make: (id: string) => T) => {
      const known = new Map<string, T>()
      return (id: string): T => {
        let v = known.get(id)
        if (v === undefined) {
          v = make(id)
          known.set(id, v)
        }
        return v
      }
    }
    const ctx = {
      ...m.createMappingContext({ now: Date.UTC(2024, 6, 1), policies: { retention: { retentionDays: 100_000 } } as never }),
      user: planned((id) => ({ uid: m.toPlatformId(id), name: id })),
      group: planned((id) => ({ guid: m.toPlatformId(id), name: id, type: 'public' as const })),
      message: (id: string) => ({ muid: m.toPlatformId(id) }),
    }
    const { IMPORT_ITEM_SCHEMAS } = await import('../../src/target/schemas.ts')
    return {
      name: 'extract + mapMessage (zod-validated)',
      check: (rec) => m.mapMessage(rec, ctx as never).kind !== undefined,
      payloads: (rec) => {
        const r = m.mapMessage(rec, ctx as never)
        return r.kind === 'items' ? r.items.map((i) => i.payload) : []
      },
      validate: (payload) => IMPORT_ITEM_SCHEMAS.messages.safeParse(payload).success,
    }
  } catch (err) {
    process.stderr.write(`mappings/ unavailable (${(err as Error).message}); validating canonical records only\n`)
    return {
      name: 'extract + canonical check',
      check: (rec) => typeof rec.id === 'string' && Number.isFinite(rec.sentAt) && (rec.receiverType === 'user' || rec.receiverType === 'group'),
    }
  }
}

interface Extract {
  rows: number
  problems: number
  ms: number
  cpuMs: number
  busy: number
  liveHeapMb?: number
}

async function extract(config: Record<string, unknown>, check: Check, sampleLiveHeap: boolean): Promise<Extract> {
  const cpu = process.cpuUsage()
  const source = createConnector(SourceConfigSchema.parse(config))
  const started = performance.now()
  // How much of the read this process spent working rather than waiting for the database: near 1,
  // the read is bound by our CPU (parse, decode, map, validate), not by the server.
  const elu = performance.eventLoopUtilization()
  const session = await source.open()
  let rows = 0
  let problems = 0
  let pages = 0
  // --live-heap: the heap still in use after a full collection, every 20 pages of the first read. It
  // tells memory that is retained (grows with the table) from garbage V8 has not collected yet (peak RSS).
  const gc = sampleLiveHeap ? (globalThis as { gc?: () => void }).gc : undefined
  let liveHeap = 0
  try {
    for await (const page of session.read('messages')) {
      for (const r of page.rows) {
        rows++
        if (!r.ok || !check(r.record)) {
          problems++
        }
      }
      if (gc && ++pages % 20 === 0) {
        gc()
        liveHeap = Math.max(liveHeap, process.memoryUsage().heapUsed)
      }
    }
  } finally {
    await session.close()
  }
  const busy = performance.eventLoopUtilization(elu).utilization
  return { rows, problems, ms: performance.now() - started, cpuMs: cpuMsSince(cpu), busy, ...(gc ? { liveHeapMb: liveHeap / 2 ** 20 } : {}) }
}

/** Timed validation passes over the floor's items, per repeat (the best is kept). */
const VALIDATION_PASSES = 3

/** Rows the validation floor is measured on: the first ones read (bounded, so it adds no memory that grows with the size). */
const FLOOR_ROWS = 20_000

/**
 * What validating the mapped items alone costs per row read, in ms: the first {@link FLOOR_ROWS}
 * rows read and mapped again, their items' payloads kept, then only `MessageImport.safeParse` timed
 * over them (best of {@link VALIDATION_PASSES}). With the raw read it is a floor for any pipeline that validates every item
 * as chatferry does, so it says how close to the raw read the target lets a connector get at all.
 */
async function validationCost(
  config: Record<string, unknown>,
  map: Mapper,
): Promise<{ rows: number; items: number; msPerRow: number; cpuMsPerRow: number } | undefined> {
  const { payloads, validate } = map
  if (payloads === undefined || validate === undefined) {
    return undefined
  }
  const source = createConnector(SourceConfigSchema.parse(config))
  const session = await source.open()
  const items: unknown[] = []
  let rows = 0
  try {
    for await (const page of session.read('messages')) {
      for (const r of page.rows) {
        rows++
        if (r.ok) {
          items.push(...payloads(r.record))
        }
      }
      if (rows >= FLOOR_ROWS) {
        break
      }
    }
  } finally {
    await session.close()
  }
  let best = Number.POSITIVE_INFINITY
  let bestCpu = Number.POSITIVE_INFINITY
  for (let round = 0; round < VALIDATION_PASSES; round++) {
    const started = performance.now()
    const cpu = process.cpuUsage()
    for (const item of items) {
      if (!validate(item)) {
        throw new Error('a mapped item failed its validation on the second pass')
      }
    }
    bestCpu = Math.min(bestCpu, cpuMsSince(cpu))
    best = Math.min(best, performance.now() - started)
  }
  return { rows, items: items.length, msPerRow: best / rows, cpuMsPerRow: bestCpu / rows }
}

async function child(size: number): Promise<void> {
  setChildRuntimeV8Flags(args)
  const system = await loadSystem()
  const map: Mapper = flag('no-map') ? { name: 'extract only', check: () => true } : await mapper()
  const { name, check } = map
  // The caches first: the OS file cache by a bare byte read (file systems), else the raw read in a
  // process of its own (a database's cache). Run here, a raw read grows this process's peak RSS
  // before chatferry's read is measured, and more for larger sizes (a 1M-row COPY left it 19 MB
  // higher than a 100k one): that would count in chatferry's spread.
  if (system.warm !== undefined) {
    await system.warm(size)
  } else {
    rawInOwnProcess(size)
  }
  // chatferry's first read runs before anything grows the heap, so the peak RSS is its own; its
  // second is the one timed, warm as the raw read's second run is.
  const baseRssMb = process.resourceUsage().maxRSS / 1024
  const first = await extract(system.sourceConfig(size, pageSize), check, flag('live-heap'))
  const peakRssMb = process.resourceUsage().maxRSS / 1024
  await system.raw(size) // the raw read's own first run in this process
  const cold = { ms: first.ms, cpuMs: first.cpuMs }
  // The three phases interleaved, `repeats` times, each phase's best run kept (by wall, and its
  // CPU by CPU): a machine whose speed drifts over seconds then weighs on all three alike, where
  // one run of each in turn charged a slow spell to whichever phase it fell in.
  const runs: { ours: Extract; raw: RawRead & { cpuMs: number }; validation: Awaited<ReturnType<typeof validationCost>> }[] = []
  // Each repeat reads and maps the floor's items again rather than keeping them: held across the
  // next chatferry read, they would be live heap that read's collections must trace.
  for (let i = 0; i < repeats; i++) {
    const ours = await extract(system.sourceConfig(size, pageSize), check, false)
    const rawCpu = process.cpuUsage()
    const raw = { ...(await system.raw(size)), cpuMs: cpuMsSince(rawCpu) }
    runs.push({ ours, raw, validation: await validationCost(system.sourceConfig(size, pageSize), map) })
  }
  const ours = { ...bestOf(runs.map((r) => r.ours)), ...(first.liveHeapMb !== undefined ? { liveHeapMb: first.liveHeapMb } : {}) }
  const raw = bestOf(runs.map((r) => r.raw))
  const validations = runs.flatMap((r) => (r.validation === undefined ? [] : [r.validation]))
  const validation =
    validations.length === 0
      ? undefined
      : {
          ...(validations[0] as NonNullable<(typeof validations)[number]>),
          msPerRow: Math.min(...validations.map((v) => v.msPerRow)),
          cpuMsPerRow: Math.min(...validations.map((v) => v.cpuMsPerRow)),
        }
  process.stdout.write(`${JSON.stringify({ size, name, raw, ours, cold, peakRssMb, baseRssMb, validation, repeats })}\n`)
}

/** The run of least wall time, with the least CPU time of all the runs. */
function bestOf<T extends { ms: number; cpuMs: number }>(runs: readonly T[]): T {
  const best = runs.reduce((a, b) => (b.ms < a.ms ? b : a))
  return { ...best, cpuMs: Math.min(...runs.map((r) => r.cpuMs)) }
}

/** The system's raw read of `size` rows in a process of its own (`--raw-only`), for the caches it warms. */
function rawInOwnProcess(size: number): void {
  const r = spawnSync(process.execPath, [import.meta.filename, '--raw-only', String(size), '--system', systemName], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  if (r.status !== 0) {
    throw new Error(`the raw read of ${size} rows in its own process failed (exit ${r.status ?? r.signal})`)
  }
}

async function main(): Promise<void> {
  if (flag('child')) {
    return child(Number(value('child')))
  }
  if (flag('raw-only')) {
    await (await loadSystem()).raw(Number(value('raw-only')))
    return
  }
  const sizes = (value('sizes') ?? (flag('quick') ? '20000' : '100000,1000000')).split(',').map(Number)
  const results: {
    size: number
    name: string
    raw: RawRead & { cpuMs: number }
    ours: Extract
    /** chatferry's first read (JIT cold); absent from a baseline checkout's older bench. */
    cold?: { ms: number; cpuMs: number }
    peakRssMb: number
    baseRssMb: number
    /** Interleaved runs per phase; absent from a baseline checkout's older bench (one run each). */
    repeats?: number
    validation?: { rows: number; items: number; msPerRow: number; cpuMsPerRow: number }
  }[] = []
  const system = await loadSystem()
  const baseline = value('baseline')
  const rounds = Number(value('rounds') ?? 1)
  // The children to run: this checkout's, and the baseline's when one is given (same bench file there).
  const scripts = baseline === undefined ? [import.meta.filename] : [`${baseline}/test/bench/connector-bench.ts`, import.meta.filename]
  const runs: { size: number; script: string }[] = []
  for (const size of sizes) {
    await system.prepare(size, flag('regenerate'))
    for (let round = 0; round < rounds; round++) {
      runs.push(...scripts.map((script) => ({ size, script })))
    }
  }
  const ratiosOf = new Map<string, { wall: number; cpu: number; usPerRow: number; rssMb: number }[]>()
  for (const { size, script } of runs) {
    const r = spawnSync(
      process.execPath,
      [
        ...v8Flags,
        ...(flag('live-heap') ? ['--expose-gc'] : []),
        script,
        '--child',
        String(size),
        '--system',
        systemName,
        '--page-size',
        String(pageSize),
        '--repeats',
        String(repeats),
        ...(flag('no-map') ? ['--no-map'] : []),
        ...(flag('live-heap') ? ['--live-heap'] : []),
        ...childV8Args(args),
      ],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    if (r.status !== 0) {
      throw new Error(`bench child for ${size} failed: ${r.stdout}`)
    }
    const result = JSON.parse(r.stdout.trim().split('\n').pop() as string) as (typeof results)[number]
    if (scripts.length === 1) {
      results.push(result)
    }
    if (result.validation !== undefined) {
      // "of the floor's": (raw + validation alone) per row ÷ chatferry's per row, by wall and by CPU.
      const v = result.validation
      const wall = (result.raw.ms / result.raw.rows + v.msPerRow) / (result.ours.ms / result.ours.rows)
      const cpu = (result.raw.cpuMs / result.raw.rows + v.cpuMsPerRow) / (result.ours.cpuMs / result.ours.rows)
      const key = `${size} ${script === import.meta.filename ? 'this checkout' : `baseline ${baseline}`}`
      ratiosOf.set(key, [
        ...(ratiosOf.get(key) ?? []),
        { wall, cpu, usPerRow: (result.ours.cpuMs * 1000) / result.ours.rows, rssMb: result.peakRssMb },
      ])
    }
  }
  if (scripts.length > 1 || rounds > 1) {
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
    process.stdout.write(`\n${system.label}, page size ${pageSize}: rate of the floor's (target ≥ 0.50), ${rounds} round(s) alternating\n`)
    for (const [key, rs] of ratiosOf) {
      const list = (f: (x: (typeof rs)[number]) => number, digits = 2) => rs.map((x) => f(x).toFixed(digits)).join(' ')
      process.stdout.write(
        `${key}: median wall ${median(rs.map((x) => x.wall)).toFixed(2)} (${list((x) => x.wall)}), median CPU ${median(rs.map((x) => x.cpu)).toFixed(2)} (${list((x) => x.cpu)}), ` +
          `chatferry CPU per row ${median(rs.map((x) => x.usPerRow)).toFixed(2)} µs (${list((x) => x.usPerRow)}), ` +
          `peak RSS ${median(rs.map((x) => x.rssMb)).toFixed(0)} MB (${list((x) => x.rssMb, 0)})\n`,
      )
    }
  }
  if (scripts.length > 1) {
    return
  }
  const fmt = (n: number) => Math.round(n).toLocaleString('en')
  process.stdout.write(`\n${system.label}, page size ${pageSize}\n`)
  for (const r of results) {
    const rawRate = (r.raw.rows / r.raw.ms) * 1000
    const ourRate = (r.ours.rows / r.ours.ms) * 1000
    process.stdout.write(
      `${fmt(r.size)} messages${r.repeats === undefined ? '' : ` (best of ${r.repeats} interleaved runs each)`}: ${system.rawName} ${fmt(r.raw.rows)} rows in ${(r.raw.ms / 1000).toFixed(2)} s = ${fmt(rawRate)} rows/s (${(r.raw.bytes / 2 ** 20).toFixed(0)} MiB)` +
        ` | ${r.name}: ${fmt(r.ours.rows)} rows (${r.ours.problems} problems) in ${(r.ours.ms / 1000).toFixed(2)} s = ${fmt(ourRate)} rows/s, ${Math.round(r.ours.busy * 100)}% busy` +
        ` | ${(ourRate / rawRate).toFixed(2)} of the raw read's rate (no target: the floor below is the one) | peak RSS ${r.peakRssMb.toFixed(0)} MB (${r.baseRssMb.toFixed(0)} MB before the read)` +
        `${r.ours.liveHeapMb !== undefined ? ` | live heap after GC ≤ ${r.ours.liveHeapMb.toFixed(0)} MB (sampled in the first read; the timed one runs without them)` : ''}\n`,
    )
    if (r.validation !== undefined) {
      const rawMsPerRow = r.raw.ms / r.raw.rows
      process.stdout.write(
        `  floor: validating the mapped items alone (MessageImport.safeParse, ${fmt(r.validation.items)} items of the first ${fmt(r.validation.rows)} rows) ` +
          `costs ${(r.validation.msPerRow * 1000).toFixed(2)} µs per row, the raw read ${(rawMsPerRow * 1000).toFixed(2)} µs: ` +
          `a pipeline that reads raw and validates every item with the import schemas (architecture.md: import items are zod-valid) reaches at most ` +
          `ratio ${(rawMsPerRow / (rawMsPerRow + r.validation.msPerRow)).toFixed(2)}; chatferry's rate is ` +
          `${((rawMsPerRow + r.validation.msPerRow) / (r.ours.ms / r.ours.rows)).toFixed(2)} of that floor's (target ≥ 0.50)\n`,
      )
      const us = (ms: number, rows: number) => ((ms * 1000) / rows).toFixed(2)
      const rawCpu = r.raw.cpuMs / r.raw.rows
      const ourCpu = r.ours.cpuMs / r.ours.rows
      const cold =
        r.cold === undefined
          ? ''
          : `; its first read, JIT cold, ${us(r.cold.cpuMs, r.ours.rows)} µs (${((rawCpu + r.validation.cpuMsPerRow) / (r.cold.cpuMs / r.ours.rows)).toFixed(2)} of the floor's)`
      process.stdout.write(
        `  CPU of this process (the database server's not counted): ${system.rawName} ${us(r.raw.cpuMs, r.raw.rows)} µs per row, ` +
          `chatferry ${us(r.ours.cpuMs, r.ours.rows)} µs, validation alone ${(r.validation.cpuMsPerRow * 1000).toFixed(2)} µs: ` +
          `by CPU chatferry's rate is ${((rawCpu + r.validation.cpuMsPerRow) / ourCpu).toFixed(2)} of the floor's ` +
          `(wall ${(r.raw.ms / r.raw.cpuMs).toFixed(1)}× CPU for the raw read, ${(r.ours.ms / r.ours.cpuMs).toFixed(1)}× for chatferry's)${cold}\n`,
      )
    }
  }
  if (results.length > 1) {
    const peaks = results.map((r) => r.peakRssMb)
    const spread = Math.max(...peaks) - Math.min(...peaks)
    process.stdout.write(`peak RSS spread across sizes: ${spread.toFixed(0)} MB (target ≤ 50 MB)\n`)
  }
}

await main()
