/**
 * `run --delta --final`'s flags of the `run` command: `--final` belongs to `--delta`, and
 * `--quiet-period`'s duration. The final delta's guard (refused while the bulk load has work) and
 * its check after the load that the legacy source no longer changes are steps of the job's run
 * (src/job/job-run.ts, src/job/final-delta.ts, src/job/final-delta-check.ts); the run row's stats
 * carry `final: true` from the start and the cutover record once it is known, so `chatferry runs`
 * shows which delta was the final one and when its read began.
 */
import { InvalidArgumentError } from 'commander'

import { UsageError } from '../usage-error.ts'

/** `--final` belongs to `--delta`: without it, a usage error (exit 2). */
export function requireDeltaForFinal(opts: { delta?: boolean; final?: boolean }): void {
  if (opts.final === true && opts.delta !== true) {
    throw new UsageError('--final needs --delta: the final read is a delta read; run `chatferry run --delta --final`')
  }
}

/** `--quiet-period`: `90`, `90s`, `5m` or `1h` → milliseconds (InvalidArgumentError: commander's exit 2, naming the flag). */
export function parseQuietPeriod(value: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|h)?$/.exec(value.trim())
  if (!m) {
    throw new InvalidArgumentError(`expected seconds or a duration such as 90s, 5m or 1h, got ${value}`)
  }
  const ms = Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 's']!
  if (ms > 24 * 3_600_000) {
    throw new InvalidArgumentError(`at most 24h, got ${value}`)
  }
  return Math.round(ms)
}
