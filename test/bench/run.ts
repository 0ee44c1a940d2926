/**
 * Runs the benchmarks: every `*-bench.ts` in this folder, or the ones named on the command line
 * (`npm run bench -- loader`). The names come first; everything from the first option on is passed
 * on as it is, values included: `npm run bench -- loader --quick --only waste`, `npm run bench --
 * connector --sizes 100000`.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

const dir = import.meta.dirname
const args = process.argv.slice(2)
const firstOption = args.findIndex((a) => a.startsWith('-'))
const names = firstOption < 0 ? args : args.slice(0, firstOption)
const flags = firstOption < 0 ? [] : args.slice(firstOption)
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
