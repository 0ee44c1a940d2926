/**
 * `chatferry files` (issue 27): what the files lane did, from the ledger only. `files counts`
 * prints the counts; `files map` the URL mapping (legacy URL → the store's public URL, with size and
 * SHA-256) as CSV or JSON, so links inside message text can be rewritten; `files failures` the
 * files not copied, with the cause, the reason and how many messages they hold. Needs no API key,
 * source password or store credentials; while a job runs it needs a Postgres ledger (`state.url`):
 * an embedded store another process holds is that process's alone (`status` reads it meanwhile).
 */
import type { Command } from 'commander'

import type { FileRow } from '../../state/index.ts'
import type { LedgerStore } from '../../state/store.ts'
import { withHelp } from '../help.ts'
import { requireKnownJob } from '../job-guard.ts'
import { openReadContext } from '../ledger-read-context.ts'
import { configOption } from '../options.ts'
import { formatStatusFiles } from '../status-files.ts'
import { JOB_OPTION_HELP } from './load.ts'

const PAGE = 5000

/** Every file of the job in the given states, a page at a time. */
async function* filesOf(store: LedgerStore, jobId: string, states: readonly string[]): AsyncGenerator<FileRow> {
  let afterId = 0
  for (;;) {
    const page = await store.files.list(jobId, { states, afterId, limit: PAGE })
    yield* page
    if (page.length < PAGE) {
      return
    }
    afterId = page[page.length - 1]?.id ?? afterId
  }
}

/** One CSV field (RFC 4180). */
export function csvField(value: string | number | null): string {
  const s = value === null ? '' : String(value)
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

const EXITS: [number, string][] = [
  [0, 'printed'],
  [1, 'the ledger could not be read, or another process holds the embedded store'],
  [2, 'usage or configuration error, unknown job'],
]

type Opts = { config: string; job?: string; json?: boolean; csv?: boolean }

async function withContext(opts: Opts, work: (store: LedgerStore, jobId: string) => Promise<void>): Promise<void> {
  const ctx = await openReadContext({ config: opts.config, ...(opts.job !== undefined ? { job: opts.job } : {}) })
  try {
    await requireKnownJob(ctx)
    await work(ctx.store, ctx.jobId)
  } finally {
    await ctx.close()
  }
}

export function registerFilesCommand(program: Command): void {
  const files = program
    .command('files')
    .summary('the files lane: counts, the legacy URL → new URL map, the files not copied')
    .description(
      'What the files lane (files.mode: rehost) did, from the ledger: `files counts` the files by state and bytes, and the ' +
        'messages waiting on files; `files map` prints the URL mapping of every copied file (legacy URL, new URL, bytes, SHA-256) so links inside message ' +
        'text can be rewritten; `files failures` the files not copied with cause and reason. Needs no API key, source password or ' +
        'store credentials.',
    )
  withHelp(files, {
    exits: EXITS,
    examples: [
      ['files counts', 'the counts'],
      ['files map --csv > url-map.csv', 'the URL map as CSV'],
    ],
  })
  withHelp(files.command('counts'), {
    exits: EXITS,
    examples: [['files counts --json', 'planned, copied, failed, skipped, bytes, messages waiting']],
  })
    .description('print the files by state, the bytes copied and the messages waiting on files')
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .option('--json', 'print JSON')
    .action(async (opts: Opts) =>
      withContext(opts, async (store, jobId) => {
        const counts = await store.files.counts(jobId)
        process.stdout.write(opts.json ? `${JSON.stringify(counts, null, 2)}\n` : `${formatStatusFiles(counts)}\n`)
      }),
    )

  withHelp(files.command('map'), {
    exits: EXITS,
    examples: [
      ['files map > url-map.json', 'every copied file: legacyUrl, url, bytes, sha256, name'],
      ['files map --csv > url-map.csv', 'the same as CSV with a header line'],
    ],
  })
    .description("print the URL mapping of the copied files (legacy URL → the store's public URL), as JSON (default) or CSV")
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .option('--csv', 'print CSV (legacy_url,url,bytes,sha256,name) instead of JSON')
    .action(async (opts: Opts) =>
      withContext(opts, async (store, jobId) => {
        const rows: { legacyUrl: string; url: string; bytes: number | null; sha256: string | null; name: string }[] = []
        if (opts.csv) {
          process.stdout.write('legacy_url,url,bytes,sha256,name\n')
        }
        for await (const f of filesOf(store, jobId, ['copied'])) {
          const row = { legacyUrl: f.legacyUrl, url: f.publicUrl ?? '', bytes: f.bytes, sha256: f.sha256, name: f.name }
          if (opts.csv) {
            process.stdout.write(`${[row.legacyUrl, row.url, row.bytes, row.sha256, row.name].map(csvField).join(',')}\n`)
          } else {
            rows.push(row)
          }
        }
        if (!opts.csv) {
          process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`)
        }
      }),
    )

  withHelp(files.command('failures'), {
    exits: EXITS,
    examples: [['files failures', 'the files not copied, with cause, reason and the messages they hold']],
  })
    .description('list the files not copied: cause, reason, attempts, the messages that link them')
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .option('--json', 'print JSON (one array)')
    .action(async (opts: Opts) =>
      withContext(opts, async (store, jobId) => {
        const failed: FileRow[] = []
        for await (const f of filesOf(store, jobId, ['failed'])) {
          failed.push(f)
        }
        if (opts.json) {
          process.stdout.write(
            `${JSON.stringify(
              failed.map(({ locator, ...f }) => ({ ...f, source: locator.reader })),
              null,
              2,
            )}\n`,
          )
          return
        }
        if (failed.length === 0) {
          process.stdout.write('no failed files\n')
          return
        }
        process.stdout.write('name\tlegacy url\tcause\tattempts\tmessages\treason\n')
        for (const f of failed) {
          process.stdout.write(
            `${f.name}\t${f.legacyUrl}\t${f.lastErrorCause ?? ''}\t${f.attempts}\t${f.messages}\t${(f.lastErrorReason ?? '').replace(/\s+/g, ' ')}\n`,
          )
        }
        process.stdout.write(`${failed.length} file(s) not copied\n`)
      }),
    )
}
