// The V8 flags chatferry runs under, whoever starts it: the installed command (bin/chatferry.js
// re-executes itself with them), `npm run chatferry`, the container image (NODE_OPTIONS, for those
// Node accepts there), the benchmarks and the tests' CLI processes. Node reads them at start-up only: set at run time
// (`v8.setFlagsFromString`) they change nothing (measured).
//
// --max-semi-space-size=16: over a long load or plan V8 grows its young generation to 64 MiB
// semi-spaces (a new space of 128 MiB, a quarter of it in use at the loader's peak), so peak RSS
// keeps climbing with the size of the job while the live heap stays flat. Capped at 16 MiB, the
// loader's peak RSS fell from 349-356 to 270-272 MB at the same throughput, and a Stream Chat export
// read's from 305 to 173 MB at 1M messages (docs/operators-guide.md, "Memory").
//
// --no-allocation-site-pretenuring: once most objects of one allocation site (an object or array
// literal in the code) are found alive at a young-generation collection, V8 allocates every later
// one straight into the old generation. A migration's records live for one page, but at start-up
// (a young generation still small, a page still being built) they all look alive, so records read
// hours later still go to the old generation, which grows until a full collection: peak RSS grew
// with the size of the export. Without it (reading exports, 1M messages against 100k, 2026-11-28):
// Rocket.Chat peak RSS 267 -> 164 MB (164 at 100k) and 15-46% less CPU a message (4 alternating
// runs), Slack 290 -> 202 MB; a dry run of 1M Mattermost posts and the loader no slower, the
// loader's CPU at 1M messages 21% lower (docs/operators-guide.md, "Memory"). Node refuses it in
// NODE_OPTIONS: the installed command adds it itself (bin/chatferry.js).
export const V8_FLAGS = ['--max-semi-space-size=16', '--no-allocation-site-pretenuring']

/**
 * The name of a flag (`--max-semi-space-size` of `--max-semi-space-size=16`), `_` read as `-` as
 * Node does, and a `--no-` flag named as the flag it negates, so an operator's own
 * `--allocation-site-pretenuring` wins over chatferry's `--no-allocation-site-pretenuring`.
 */
function flagName(flag) {
  const name = flag.split('=')[0].replaceAll('_', '-')
  return name.startsWith('--no-') ? `--${name.slice('--no-'.length)}` : name
}

/**
 * Of `V8_FLAGS`, those neither the command line (`execArgv`) nor `NODE_OPTIONS` sets already: an
 * operator's own value of a flag always wins.
 */
export function missingV8Flags(execArgv, nodeOptions) {
  const given = new Set([...execArgv, ...(nodeOptions ?? '').split(/\s+/)].filter((a) => a.startsWith('--')).map(flagName))
  return V8_FLAGS.filter((flag) => !given.has(flagName(flag)))
}
