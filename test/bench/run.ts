/**
 * Runs the benchmarks: every `*-bench.ts` in this folder, or the ones named on the command line
 * (`npm run bench -- loader`); other arguments (e.g. `--quick`) are passed on.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

const dir = import.meta.dirname
const args = process.argv.slice(2)
const names = args.filter((a) => !a.startsWith('-'))
const flags = args.filter((a) => a.startsWith('-'))
const all = readdirSync(dir)
  .filter((f) => f.endsWith('-bench.ts'))
  .sort()
const chosen = names.length === 0 ? all : all.filter((f) => names.some((n) => f === n || f === `${n}-bench.ts` || f.startsWith(n)))
if (chosen.length === 0) {
  process.stderr.write(`no benchmark matches ${names.join(', ')}; there are: ${all.join(', ')}\n`)
  process.exit(2)
}
let failed = 0
for (const file of chosen) {
  process.stdout.write(`\n=== ${file} ${flags.join(' ')}\n`)
  const r = spawnSync(process.execPath, [join(dir, file), ...flags], { stdio: 'inherit' })
  if (r.status !== 0) {
    failed++
  }
}
process.exit(failed > 0 ? 1 : 0)
