/**
 * Progress of the long phases (planning: reading and mapping the source; loading: sending to the
 * platform), one row per entity. On a terminal: a cli-progress bar per entity, redrawn in place,
 * with log lines printed above it (src/terminal-output.ts). Anywhere else (a scheduler, a pipe, a
 * file): a plain line per entity every `$CHATFERRY_PROGRESS_SECONDS` (default 30) — no control
 * characters — or, when the log format is json, the same line as a JSON log record.
 */
import { createRequire } from 'node:module'

import type * as CliProgress from 'cli-progress'
import type { SingleBar } from 'cli-progress'
import type { Logger } from 'pino'

import { formatDuration } from '../format-duration.ts'
import { logFormat } from '../logger.ts'
import { claimTerminal } from '../terminal-output.ts'
import { foldLine } from './fold-line.ts'

/** Where one entity stands. */
export interface ProgressRow {
  readonly entity: string
  /** Items finished (loading: done, skipped or rejected; planning: source rows read). */
  readonly value: number
  /** Items in all; undefined when not known yet (planning reads until the source ends). */
  readonly total: number | undefined
  /** Items per minute over the last minute. */
  readonly perMinute: number
  /** What the rate is of the platform's quota (0..1); undefined when no quota applies. */
  readonly ofQuota: number | undefined
  /** `ETA 3m 10s`, `done`, or (planning) what loading the planned items takes at the quota. */
  readonly eta: string
  /** Extra words at the end (rejected count, items planned). */
  readonly note?: string
}

export interface ProgressView {
  update(rows: readonly ProgressRow[]): void
  /** Draws the last rows for good (the bar) or prints them (plain lines), and gives stderr back. */
  stop(): void
}

const n = (v: number) => Math.round(v).toLocaleString('en-US')

/** The numbers of a row, the same words on a bar and in a plain line. */
function describe(row: ProgressRow, unit: string): string {
  const of = row.total !== undefined ? `${n(row.value)}/${n(row.total)}` : n(row.value)
  const pct = row.total !== undefined && row.total > 0 ? ` ${((row.value / row.total) * 100).toFixed(1)}%` : ''
  const quota = row.ofQuota !== undefined ? ` (${(row.ofQuota * 100).toFixed(0)}% of quota)` : ''
  return `${row.entity} ${of} ${unit}${pct}  ${n(row.perMinute)} ${unit}/min${quota}  ${row.eta}${row.note ? `  ${row.note}` : ''}`
}

/**
 * One bar's line in at most `columns` characters, never cutting a fact in half: the full line when
 * it fits; else the short form (percent, rate, ETA, note) beside a narrower bar; then without the
 * bar, then without the note. The ETA stays on every form: it is what a person looks for.
 */
export function barLine(phase: string, row: ProgressRow, unit: string, progress: number, columns: number): string {
  const known = row.total !== undefined
  const bar = (size: number) => {
    const filled = known ? Math.round(Math.min(1, Math.max(0, progress)) * size) : 0
    return known ? `${'█'.repeat(filled)}${'░'.repeat(size - filled)}` : '·'.repeat(size)
  }
  const full = `${phase} ${bar(24)} ${describe(row, unit)}`
  if (full.length <= columns) {
    return full
  }
  const pct = known && row.total! > 0 ? `${((row.value / row.total!) * 100).toFixed(1)}%` : `${n(row.value)} ${unit}`
  const short = `${row.entity} ${pct} ${n(row.perMinute)}/min ${row.eta}`
  for (const text of [`${short}${row.note ? `  ${row.note}` : ''}`, short, `${row.entity} ${pct} ${row.eta}`]) {
    const room = columns - phase.length - text.length - 2
    if (room >= 6) {
      return `${phase} ${bar(Math.min(24, room))} ${text}`
    }
    if (`${phase} ${text}`.length <= columns) {
      return `${phase} ${text}`
    }
  }
  return `${row.entity} ${pct} ${row.eta}`.slice(0, columns)
}

/** The terminal's width: what it reports, else $COLUMNS (a pseudo-terminal may report 0), else 80. */
function terminalColumns(): number {
  return process.stderr.columns || Number(process.env.COLUMNS) || 80
}

export interface ProgressOptions {
  /** `planning` or `loading`: the first word of every plain line. */
  readonly phase: string
  /** What is counted: `items`, `rows`. */
  readonly unit: string
  /** For JSON progress records when stderr is not a terminal. */
  readonly logger?: Logger
  /** @default process.stderr.isTTY */
  readonly tty?: boolean
  /** Seconds between plain lines. @default $CHATFERRY_PROGRESS_SECONDS, else 30 */
  readonly everySeconds?: number
}

export function createProgressView(options: ProgressOptions): ProgressView {
  const tty = options.tty ?? process.stderr.isTTY === true
  return tty ? barView(options) : lineView(options)
}

function barView(options: ProgressOptions): ProgressView {
  // Required here, not imported: only a terminal draws bars.
  const { MultiBar } = createRequire(import.meta.url)('cli-progress') as typeof CliProgress
  const multi = new MultiBar(
    {
      stream: process.stderr,
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      autopadding: true,
      barsize: 24,
      fps: 4,
      format: (_opts, params, payload: { row: ProgressRow }) => barLine(options.phase, payload.row, options.unit, params.progress, terminalColumns()),
    },
    undefined,
  )
  const bars = new Map<string, SingleBar>()
  // Log lines go above the bars: cli-progress prints its buffer, then redraws the bars under it.
  // The terminal does not wrap while the bars are drawn: each line is folded to its width.
  claimTerminal({
    log: (line) => {
      multi.log(foldLine(line, terminalColumns()))
      multi.update()
    },
  })
  let stopped = false
  return {
    update(rows) {
      if (stopped) {
        return
      }
      for (const row of rows) {
        const payload = { row }
        const total = row.total ?? Math.max(row.value, 1)
        const bar = bars.get(row.entity)
        if (bar) {
          bar.setTotal(total)
          bar.update(row.value, payload)
        } else {
          bars.set(row.entity, multi.create(total, row.value, payload))
        }
      }
    },
    stop() {
      if (stopped) {
        return
      }
      stopped = true
      multi.update()
      claimTerminal(undefined)
      multi.stop()
    },
  }
}

function lineView(options: ProgressOptions): ProgressView {
  const every = (options.everySeconds ?? (Number(process.env.CHATFERRY_PROGRESS_SECONDS) || 30)) * 1000
  let last: readonly ProgressRow[] = []
  let printed = 0
  let printedRows: readonly ProgressRow[] | undefined
  const print = (rows: readonly ProgressRow[]) => {
    printedRows = rows
    for (const row of rows) {
      const text = `${options.phase} ${describe(row, options.unit)}`
      if (options.logger && logFormat() === 'json') {
        options.logger.info({ progress: { phase: options.phase, ...row } }, text)
      } else {
        process.stderr.write(`${text}\n`)
      }
    }
  }
  let stopped = false
  return {
    update(rows) {
      if (stopped) {
        return
      }
      last = rows
      if (Date.now() - printed >= every) {
        printed = Date.now()
        print(rows)
      }
    },
    stop() {
      stopped = true
      if (last.length > 0 && printedRows !== last) {
        print(last)
      }
      last = []
    },
  }
}

/** Per-entity rates over the last minute from a series of counts. */
export function createRateMeter(): (counts: ReadonlyMap<string, number>) => Map<string, number> {
  const samples: { at: number; counts: ReadonlyMap<string, number> }[] = []
  return (counts) => {
    const now = Date.now()
    samples.push({ at: now, counts })
    while (samples.length > 2 && now - (samples[0]?.at ?? now) > 60_000) {
      samples.shift()
    }
    const first = samples[0]
    const rates = new Map<string, number>()
    for (const [entity, value] of counts) {
      rates.set(entity, first && now > first.at ? ((value - (first.counts.get(entity) ?? 0)) / (now - first.at)) * 60_000 : 0)
    }
    return rates
  }
}

/** `ETA …` from what remains and the rate, else at the quota. */
export function etaText(remaining: number, perMinute: number, quotaPerMinute: number): string {
  if (remaining === 0) {
    return 'done'
  }
  if (perMinute > 0) {
    return `ETA ${formatDuration((remaining / perMinute) * 60)}`
  }
  return quotaPerMinute > 0 ? `ETA@quota ${formatDuration((remaining / quotaPerMinute) * 60)}` : 'ETA unknown'
}
