/**
 * `chatferry fleet plan`: the dry run of every tenant (src/job/run-plan.ts: nothing sent, no item
 * changed; each tenant's own plan report is saved in its job and, with `outDir`, written under
 * `<outDir>/tenants/<tenant>/`), at most `concurrency` tenants at once, then the fleet plan report
 * (src/report/fleet-plan-report.ts): a row per tenant and the fleet's totals. A tenant whose plan
 * fails (unreachable source, a query the source refuses) is a row with its error; the others go on.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

import PQueue from 'p-queue'

import { runPlan } from '../job/run-plan.ts'
import { renderFleetPlanHtml } from '../report/fleet-plan-html.ts'
import { buildFleetPlanReport, failedPlanRow, type FleetPlanReport, fleetPlanRow, type FleetPlanTenant } from '../report/fleet-plan-report.ts'
import type { LedgerStore } from '../state/store.ts'
import type { FleetTenantJob } from './fleet-run.ts'
import { needsFix, reasonOf } from './fleet-run-outcome.ts'

export interface FleetPlanOptions {
  readonly fleet: string
  readonly store: LedgerStore
  readonly tenants: readonly FleetTenantJob[]
  readonly concurrency: number
  /** Directory of `fleet-plan-report.json` / `.html` and the tenants' own reports; none written when absent. */
  readonly outDir?: string
  readonly signal?: AbortSignal
}

export interface FleetPlanResult {
  readonly report: FleetPlanReport
  readonly files: { json: string; html: string } | undefined
  /** Some tenant's plan failed for a reason a rerun cannot fix (its configuration, its source's query or login). */
  readonly needsFix: boolean
}

export async function runFleetPlan(options: FleetPlanOptions): Promise<FleetPlanResult> {
  const startedAt = Date.now()
  const slots = new PQueue({ concurrency: Math.max(1, options.concurrency) })
  let fix = false
  const rows = await Promise.all(
    options.tenants.map((t) =>
      slots.add(async (): Promise<FleetPlanTenant> => {
        const who = { tenantId: t.tenantId, jobId: t.jobId, region: t.config.target.region }
        try {
          const result = await runPlan(
            { config: t.config, jobId: t.jobId, store: options.store },
            {
              ...(options.outDir ? { outDir: join(options.outDir, 'tenants', t.tenantId) } : {}),
              ...(options.signal ? { signal: options.signal } : {}),
            },
          )
          return fleetPlanRow(who, result.report)
        } catch (err) {
          fix ||= needsFix(err)
          const { requestsPerMinute, itemsPerRequest } = t.config.target.quota
          return failedPlanRow({ ...who, appId: t.config.target.appId, quota: { requestsPerMinute, itemsPerRequest } }, reasonOf(err))
        }
      }),
    ),
  )
  const report = buildFleetPlanReport(options.fleet, rows, startedAt)
  const files = options.outDir ? writeFleetPlanFiles(options.outDir, report) : undefined
  return { report, files, needsFix: fix }
}

function writeFleetPlanFiles(dir: string, report: FleetPlanReport): { json: string; html: string } {
  const out = resolve(dir)
  mkdirSync(out, { recursive: true })
  const paths = { json: join(out, 'fleet-plan-report.json'), html: join(out, 'fleet-plan-report.html') }
  writeFileSync(paths.json, `${JSON.stringify(report, null, 2)}\n`)
  writeFileSync(paths.html, renderFleetPlanHtml(report))
  return paths
}
