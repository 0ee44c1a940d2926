/**
 * `chatferry fleet verify`: `verify` (src/report/verify.ts) for every tenant, at most
 * `concurrency` at once, each against its own app with its own key and chat quota; each tenant's
 * report under `<outDir>/tenants/<tenant>/`. A tenant whose verify cannot run (its app unreachable,
 * its job never loaded) is a line with its reason; the others go on. The reports' notes advise the
 * fleet's commands for the tenant (`fleet run --delta --tenant …`), not a single job's.
 */
import { join } from 'node:path'

import PQueue from 'p-queue'

import { runVerify } from '../report/verify.ts'
import type { VerifyAdvice } from '../report/verify-run.ts'
import type { LedgerStore } from '../state/store.ts'
import { type FleetTenantJob, tenantContext } from './fleet-run.ts'
import { needsFix, reasonOf } from './fleet-run-outcome.ts'

export interface TenantVerdict {
  readonly tenantId: string
  readonly jobId: string
  /** `passed`: no unexplained mismatch; `mismatches`: some; `failed`: verify could not run. */
  readonly verdict: 'passed' | 'mismatches' | 'failed'
  readonly mismatches: number
  readonly unexplained: number
  /** The tenant's rejects an operator accepted: no mismatch, said beside the verdict. */
  readonly accepted: number
  readonly report: string | null
  readonly reason: string | null
  readonly needsFix: boolean
}

export interface FleetVerifyOptions {
  readonly store: LedgerStore
  readonly tenants: readonly FleetTenantJob[]
  readonly concurrency: number
  readonly outDir: string
  readonly sample?: number
  readonly signal?: AbortSignal
  /** The fleet file, for the commands the reports advise. */
  readonly fleetFile?: string
  /** Plan again what each tenant's ledger calls loaded and its app lacks (`verify --replan`). */
  readonly replan?: boolean
}

/** What a tenant's verify notes advise: the fleet's commands for that tenant (its job has no file of its own). */
export function tenantAdvice(t: Pick<FleetTenantJob, 'tenantId' | 'jobId'>, fleetFile: string | undefined): VerifyAdvice {
  const fleet = fleetFile === undefined ? '' : ` --fleet ${fleetFile}`
  return {
    delta: `chatferry fleet run --delta${fleet} --tenant ${t.tenantId}`,
    reconcile: `chatferry fleet run --delta --reconcile-keys${fleet} --tenant ${t.tenantId}`,
    load: `chatferry fleet run${fleet} --tenant ${t.tenantId}`,
    rejects: `chatferry rejects --job ${t.jobId}`,
    retry: `chatferry retry-rejected --job ${t.jobId}`,
    replan: `chatferry fleet verify --replan${fleet} --tenant ${t.tenantId}`,
  }
}

/** A tenant whose verify could not run, with the reason. */
export function failedVerdict(who: Pick<TenantVerdict, 'tenantId' | 'jobId'>, reason: string, fix: boolean): TenantVerdict {
  return { ...who, verdict: 'failed', mismatches: 0, unexplained: 0, accepted: 0, report: null, reason, needsFix: fix }
}

export async function runFleetVerify(options: FleetVerifyOptions): Promise<TenantVerdict[]> {
  const slots = new PQueue({ concurrency: Math.max(1, options.concurrency) })
  return Promise.all(
    options.tenants.map((t) =>
      slots.add(async (): Promise<TenantVerdict> => {
        const who = { tenantId: t.tenantId, jobId: t.jobId }
        if (!(await options.store.listJobs()).some((j) => j.id === t.jobId)) {
          return failedVerdict(who, 'never run: run `chatferry fleet run` first', true)
        }
        try {
          const result = await runVerify(tenantContext(t, options.store), {
            outDir: join(options.outDir, 'tenants', t.tenantId),
            advice: tenantAdvice(t, options.fleetFile),
            replan: options.replan === true,
            ...(options.sample !== undefined ? { sample: options.sample } : {}),
            ...(options.signal ? { signal: options.signal } : {}),
          })
          const { mismatches, unexplained } = result.report.totals
          const accepted = Object.values(result.report.acceptedRejects?.entities ?? {}).reduce((a, b) => a + b, 0)
          return {
            ...who,
            verdict: result.passed ? 'passed' : 'mismatches',
            mismatches,
            unexplained,
            accepted,
            report: result.files?.html ?? null,
            reason: null,
            needsFix: false,
          }
        } catch (err) {
          return failedVerdict(who, reasonOf(err), needsFix(err))
        }
      }),
    ),
  )
}
