/**
 * The V8 flags of a benchmark's child processes, for the benchmarks that measure chatferry's own
 * code in a child (connector, plan): chatferry's start-up flags (bin/v8-flags.js) but those
 * NODE_OPTIONS sets, and its runtime ones set in the child as the CLI sets them
 * (src/cli/runtime-v8-flags.ts). `--v8-defaults`: V8's own instead; `--v8-flag F` (repeatable)
 * adds F, to try a flag Node refuses in NODE_OPTIONS (`--v8-flag --allocation-site-pretenuring`
 * undoes chatferry's runtime one).
 */
import { missingV8Flags } from '../../bin/v8-flags.js'
import { applyRuntimeV8Flags } from '../../src/cli/runtime-v8-flags.ts'

/** The node flags to start a child with, from the benchmark's own arguments. */
export function childNodeFlags(args: readonly string[]): string[] {
  return [
    ...(args.includes('--v8-defaults') ? [] : missingV8Flags([], process.env.NODE_OPTIONS)),
    ...args.flatMap((a, i) => (args[i - 1] === '--v8-flag' ? [a] : [])),
  ]
}

/** The arguments a child needs to know it runs under V8's own flags. */
export const childV8Args = (args: readonly string[]): string[] => (args.includes('--v8-defaults') ? ['--v8-defaults'] : [])

/** In the child: chatferry's runtime flags, unless under V8's own. */
export function setChildRuntimeV8Flags(args: readonly string[]): void {
  if (!args.includes('--v8-defaults')) {
    applyRuntimeV8Flags()
  }
}
