/**
 * `chatferry demo`: a complete migration on embedded defaults, with nothing installed. It writes
 * an in-house legacy chat database (SQLite) — and, with `source`, the same history as a hosted
 * service's export (Sendbird Data Export, Stream Chat v2), which it then reads instead — starts the platform sandbox in this process with a
 * demo-sized quota, shows the dry-run report, migrates everything through the real pipeline
 * (generic-sql connector → mappings → embedded ledger → quota-paced loader → sandbox over HTTP),
 * then runs `verify` against the sandbox.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

import { stringify } from 'yaml'

import { startDemoFileHost } from '../demo/demo-file-host.ts'
import { type DemoSource, writeSampleExport } from '../demo/sample-export.ts'
import { createSampleLegacyDatabase, DEMO_SIZE, PLANTED_BAD_ROWS, SAMPLE_QUERIES, type SampleSize } from '../demo/sample-legacy.ts'
import type { LedgerContext } from '../job/ledger-context.ts'
import { planFromSource } from '../job/plan-from-source.ts'
import { runPlan } from '../job/run-plan.ts'
import { buildReport, formatStatusTable } from '../load/progress.ts'
import { createLogger } from '../logger.ts'
import { formatPlanSummary } from '../plan/format-plan-summary.ts'
import { runVerify } from '../report/verify.ts'
import { startSandbox } from '../sandbox/index.ts'
import { INVOCATION } from '../version.ts'
import { EXIT } from './exit-codes.ts'
import { openCommandContext } from './open-command-context.ts'
import { runLoaderCommand } from './run-loader-command.ts'

export interface DemoOptions {
  /** Where the demo keeps its files; wiped first. @default .chatferry/demo */
  readonly dir?: string
  /** The sandbox's and the loader's quota, requests per minute. @default 6000 */
  readonly requestsPerMinute?: number
  readonly size?: SampleSize
  /** What the demo reads: the SQLite database (`sql`), or the same history as a hosted service's export. @default sql */
  readonly source?: DemoSource
  readonly out?: NodeJS.WritableStream
}

/** The generic-sql connector's `source:` block for the sample database. */
const sqlSource = (legacyPath: string) => ({
  connector: 'generic-sql',
  url: `sqlite:${legacyPath}`,
  entities: {
    users: { query: SAMPLE_QUERIES.users, timeFormat: 'epoch-ms' },
    groups: { query: SAMPLE_QUERIES.groups, timeFormat: 'epoch-ms' },
    members: { query: SAMPLE_QUERIES.members, timeFormat: 'epoch-ms' },
    messages: { query: SAMPLE_QUERIES.messages, timeFormat: 'epoch-ms' },
  },
})

export async function runDemo(options: DemoOptions = {}): Promise<number> {
  const out = options.out ?? process.stdout
  const dir = resolve(options.dir ?? join('.chatferry', 'demo'))
  const rpm = options.requestsPerMinute ?? 6000
  const now = Date.now()
  const started = performance.now()
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })

  // The legacy system's file host and the local store's public URL, both served by the demo.
  const storeDir = join(dir, 'files')
  const fileHost = await startDemoFileHost(storeDir)
  const legacyPath = join(dir, 'legacy.sqlite')
  const sample = createSampleLegacyDatabase(legacyPath, now, options.size ?? DEMO_SIZE, 42, fileHost.legacyBase)
  const source = options.source ?? 'sql'
  const exported = source === 'sql' ? undefined : writeSampleExport(source, legacyPath, join(dir, 'legacy-export'))
  out.write(
    `1/6 legacy database: ${legacyPath}\n    ${sample.rows.users} accounts, ${sample.rows.rooms} rooms, ${sample.rows.members} memberships, ${sample.rows.posts} posts (an in-house schema${exported === undefined ? ', read by the generic-sql connector' : ''})\n`,
  )
  if (exported !== undefined) {
    out.write(
      `    the same history written as ${exported.describe}: ${join(dir, 'legacy-export')} (read by the ${String(exported.source.connector)} connector)\n`,
    )
  }

  const apiKey = randomBytes(20).toString('hex')
  const sandbox = await startSandbox({ apps: [{ id: 'demo', apiKey, settings: { requestsPerMinute: rpm } }] })
  let ctx: LedgerContext | undefined
  try {
    const app = await sandbox.createApp({ id: 'demo', apiKey }) // reuses the app created at start
    out.write(`2/6 sandbox: ${sandbox.url} (app "demo", quota ${rpm} requests/min, 50 items/request)\n`)

    const configPath = join(dir, 'chatferry.yaml')
    writeFileSync(
      configPath,
      `# Written by \`chatferry demo\`. The sandbox it points at lived only while the demo ran;\n` +
        `# \`chatferry status -c ${configPath}\` still reads the ledger.\n` +
        stringify({
          target: {
            appId: 'demo',
            region: 'us',
            apiKey: '${CHATFERRY_DEMO_API_KEY:-demo-key-not-secret}',
            baseUrl: app.baseUrl,
            quota: { requestsPerMinute: rpm, itemsPerRequest: 50 },
          },
          state: { dir: join(dir, 'state') },
          source: exported?.source ?? sqlSource(legacyPath),
          policies: { threads: { quoteParent: 8 }, deletes: { mode: 'tombstone' }, systemMessages: { mode: 'as-user' } },
          // Every attachment re-hosted into a local store the demo serves itself (docs/files.md).
          files: {
            mode: 'rehost',
            onFailure: 'wait',
            store: { kind: 'local', directory: storeDir, publicBaseUrl: fileHost.storeBase },
            perHost: { concurrency: 16, requestsPerSecond: 2000 },
          },
        }),
    )
    process.env.CHATFERRY_DEMO_API_KEY = apiKey
    ctx = await openCommandContext({ config: configPath })
    const logger = createLogger({ level: 'error' })
    const reports = join(dir, 'reports')
    const dry = await runPlan(ctx, { outDir: reports, checkTarget: true, now })
    out.write(`3/6 dry run (nothing sent, no item changed):\n`)
    out.write(indent(dry.text))
    const summary = await planFromSource(ctx, { now, logger })
    out.write(`4/6 planned (policies: threads quoted, deletes as tombstones, system messages as a system user):\n`)
    out.write(indent(formatPlanSummary(summary)))

    const loadStarted = performance.now()
    const code = await runLoaderCommand(ctx, 'load', logger)
    const stats = await ctx.store.entityStats(ctx.jobId)
    out.write(`5/6 loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s:\n`)
    out.write(indent(formatStatusTable(buildReport(stats, { requestsPerMinute: rpm, itemsPerRequest: 50 }))))

    // Every copy is fetched from the store and hashed against the SHA-256 of its source's bytes.
    const verified = await runVerify(ctx, { outDir: reports, chatRequestsPerMinute: rpm, fileSample: Number.MAX_SAFE_INTEGER })
    out.write(`6/6 verify (the platform's lists against the ledger and the source):\n`)
    out.write(indent(verified.text))
    const problems: string[] = []
    if (!dry.passed) {
      problems.push('the dry run found a problem with the target')
    }
    if (!verified.passed) {
      problems.push(
        `verify found ${verified.report.totals.unexplained} unexplained mismatches${verified.report.files?.problems.length ? ` and ${verified.report.files.problems.length} copies that do not answer as recorded` : ''}`,
      )
    }
    const files = await ctx.store.files.counts(ctx.jobId)
    if (files.copied === 0 || files.failed + files.planned > 0 || verified.report.files?.sampleHashed !== files.copied) {
      problems.push(
        `files: ${files.copied} copied, ${files.failed} failed, ${files.planned} not copied, ${verified.report.files?.sampleHashed ?? 0} hashed by verify`,
      )
    }
    const rejects = await ctx.store.listRejects(ctx.jobId, { limit: 1000 })
    out.write(
      `quarantined (${rejects.length}): ${rejects.map((r) => `${r.entity} ${r.legacyId} [${r.code}] ${r.message}`).join('\n                 ')}\n`,
    )
    const plantedRows = exported?.planted ?? PLANTED_BAD_ROWS
    const planted: string[] = [...plantedRows.users, ...plantedRows.messages]
    // The sample database also holds a membership of a room that does not exist (an export cannot).
    const unexpected = rejects.filter((r) => !planted.includes(r.legacyId) && !(r.entity === 'members' && r.legacyId.startsWith('room-gone/')))
    if (code !== EXIT.OK && code !== EXIT.REJECTED) {
      problems.push(`the loader stopped with exit code ${code}`)
    }
    for (const r of unexpected) {
      problems.push(`unexpected reject: ${r.entity} ${r.legacyId} [${r.code}] ${r.message}`)
    }
    for (const id of planted) {
      if (!rejects.some((r) => r.legacyId === id)) {
        problems.push(`the planted bad row ${id} was not quarantined`)
      }
    }
    if (problems.length > 0) {
      out.write(`demo FAILED:\n${problems.map((p) => `  - ${p}`).join('\n')}\n`)
      return EXIT.ERROR
    }
    out.write(
      `verified: the sandbox holds exactly the items the ledger says were loaded, once each; the only rejects are the planted bad rows;\n` +
        `          every attachment was re-hosted into ${storeDir} and each copy hashes to its source's bytes.\n` +
        `done in ${((performance.now() - started) / 1000).toFixed(1)} s. Reports: ${reports}/{plan,verify}-report.html\n` +
        `Ledger: ${join(dir, 'state')} — try: ${INVOCATION} status -c ${configPath}\n`,
    )
    return EXIT.OK
  } finally {
    await ctx?.close()
    await sandbox.close()
    await fileHost.close()
  }
}

function indent(text: string): string {
  return `${text.replace(/^(?=.)/gm, '    ').trimEnd()}\n`
}
