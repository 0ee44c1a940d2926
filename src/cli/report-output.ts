/** What `plan` and `verify` share on the command line: the chat pace flag and printing a report. */
import { EXIT } from './exit-codes.ts'
import { UsageError } from './usage-error.ts'

/** `--chat-rpm`: a positive number, or absent. */
export function parseChatRpm(raw: string | undefined): number | undefined {
  if (raw === undefined) {
    return undefined
  }
  const n = Number(raw)
  if (!(Number.isFinite(n) && n > 0)) {
    throw new UsageError(`--chat-rpm: expected a positive number, got ${raw}`)
  }
  return n
}

/** Prints the summary (or the JSON report) and the written files; returns the exit code. */
export function printReportResult(
  result: { report: unknown; text: string; files: { json: string; html: string } | undefined; passed: boolean },
  json: boolean | undefined,
): number {
  if (json) {
    process.stdout.write(`${JSON.stringify(result.report, null, 2)}\n`)
  } else {
    process.stdout.write(result.text)
    if (result.files) {
      process.stdout.write(`report: ${result.files.json}\n        ${result.files.html}\n`)
    }
  }
  return result.passed ? EXIT.OK : EXIT.REJECTED
}
