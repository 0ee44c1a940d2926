// The V8 flags chatferry runs under, whoever starts it: the installed command (bin/chatferry.js
// re-executes itself with them), `npm run chatferry`, the container image (its NODE_OPTIONS), the
// benchmarks and the tests' CLI processes. Node reads them at start-up only: set at run time
// (`v8.setFlagsFromString`) they change nothing (measured).
//
// --max-semi-space-size=16: over a long load or plan V8 grows its young generation to 64 MiB
// semi-spaces (a new space of 128 MiB, a quarter of it in use at the loader's peak), so peak RSS
// keeps climbing with the size of the job while the live heap stays flat. Capped at 16 MiB, the
// loader's peak RSS fell from 349-356 to 270-272 MB at the same throughput, and a Stream Chat export
// read's from 305 to 173 MB at 1M messages (docs/operators-guide.md, "Memory").
export const V8_FLAGS = ['--max-semi-space-size=16']

/** The name of a flag (`--max-semi-space-size` of `--max-semi-space-size=16`), `_` read as `-` as Node does. */
function flagName(flag) {
  return flag.split('=')[0].replaceAll('_', '-')
}

/**
 * Of `V8_FLAGS`, those neither the command line (`execArgv`) nor `NODE_OPTIONS` sets already: an
 * operator's own value of a flag always wins.
 */
export function missingV8Flags(execArgv, nodeOptions) {
  const given = new Set([...execArgv, ...(nodeOptions ?? '').split(/\s+/)].filter((a) => a.startsWith('--')).map(flagName))
  return V8_FLAGS.filter((flag) => !given.has(flagName(flag)))
}
