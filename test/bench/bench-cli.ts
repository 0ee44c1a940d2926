/**
 * The CLI the benchmarks start as a process: imported first by every benchmark that runs
 * `chatferry` (through test/helpers/ledger-fixtures.ts's `runCli`/`CLI`), it builds the bundle
 * from this checkout's sources before the benchmark starts (a few seconds), as the test run's
 * global setup does for the tests. Without it a benchmark run on a fresh checkout, or after a
 * change, would start a missing or stale bundle.
 */
import { buildCliBundle } from '../helpers/cli-bundle.ts'

await buildCliBundle()
