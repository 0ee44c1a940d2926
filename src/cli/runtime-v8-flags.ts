/**
 * The V8 flags chatferry sets itself as it runs, once its modules are loaded (main.ts): V8 reads
 * them as it goes, unlike the start-up ones of bin/v8-flags.js. An operator's own value of one, on
 * the command line or in NODE_OPTIONS, wins (for a `--no-` flag, the flag it negates counts).
 *
 * --no-allocation-site-pretenuring: once most objects of one allocation site (an object or array
 * literal in the code) are found alive at a young-generation collection, V8 allocates every later
 * one straight into the old generation. A migration's records live for one page, but early in a
 * read (a young generation still small, a page still being built) they all look alive, so records
 * read hours later still went to the old generation, which grew until a full collection: peak RSS
 * grew with the size of the export. Without it (reading exports, 1M messages against 100k,
 * 2026-11-28): Rocket.Chat peak RSS 267 -> 164 MB (164 at 100k) and 15-46% less CPU a message (4
 * alternating runs), Slack 290 -> 202 MB; a dry run of 1M Mattermost posts and the loader no
 * slower, the loader's CPU at 1M messages 21% lower (docs/operators-guide.md, "Memory"). Given at
 * start-up instead, it cost every start about 0.1 s of CPU (loading the modules, measured on
 * `--version`), and Node refuses it in NODE_OPTIONS.
 *
 * --heap-growing-percent=50: after a full collection V8 lets the old generation grow to a multiple
 * of what survived before the next one, a multiple it picks itself (up to 4) from how fast the
 * program allocates against how fast it collects; over a long read it picked higher ones, so peak
 * RSS grew with the read while the live heap stayed at ~30 MB. At 1.5 the next collection comes
 * sooner and costs little (the live heap is small). Reading 1M messages against 100k, 2026-11-28
 * (docs/operators-guide.md, "Memory"): Mattermost peak RSS 226 -> 170 MB (156 at 100k), Zulip
 * 191 -> 163 MB, CPU a message the same within the noise. V8's own choice back: `0`.
 */
import v8 from 'node:v8'

export const RUNTIME_V8_FLAGS: readonly string[] = ['--no-allocation-site-pretenuring', '--heap-growing-percent=50']

/** A flag's name, `_` read as `-` as Node does and `--no-x` as `--x`. */
function flagName(flag: string): string {
  const name = (flag.split('=')[0] as string).replaceAll('_', '-')
  return name.startsWith('--no-') ? `--${name.slice('--no-'.length)}` : name
}

/** Of {@link RUNTIME_V8_FLAGS}, those neither the command line (`execArgv`) nor `NODE_OPTIONS` gives a value of. */
export function missingRuntimeV8Flags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = new Set([...execArgv, ...(nodeOptions ?? '').split(/\s+/)].filter((a) => a.startsWith('--')).map(flagName))
  return RUNTIME_V8_FLAGS.filter((flag) => !given.has(flagName(flag)))
}

/** Sets the runtime flags this process was not started with; returns them. */
export function applyRuntimeV8Flags(
  setFlags: (flag: string) => void = (flag) => v8.setFlagsFromString(flag),
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): string[] {
  const missing = missingRuntimeV8Flags(execArgv, nodeOptions)
  for (const flag of missing) {
    setFlags(flag)
  }
  return missing
}
