/**
 * The sign-off section of verify: per entity, what the latest plan report said a load would
 * create (or found loaded), skip and reject — plus the new items every delta run since that plan
 * planned (rows added to the source after it) — next to what the ledger now holds and what verify
 * found on the platform. Without the deltas, a cutover's deltas would read as "more than planned".
 */
import { LEGACY_ENTITIES, type LegacyEntity } from '../model/index.ts'
import type { EntityStats, RunRecord } from '../state/store.ts'
import type { ActualVsPlan, PlanReport, VerifyReport } from './schema.ts'

/** What the delta runs since the plan added: their count and the new items they planned, per entity. */
export interface PlannedSince {
  readonly runs: number
  readonly created: Record<LegacyEntity, number>
}

/**
 * The delta runs that started after the plan report was written (finished or not), and the items
 * each inserted into the ledger (`stats.plan.entities[e].ledger.inserted`, what `runs` shows as new).
 * A full run after the plan reads the rows the plan read, so only deltas add to it.
 */
export function plannedSince(plan: PlanReport | undefined, runs: readonly RunRecord[]): PlannedSince | undefined {
  if (plan === undefined) {
    return undefined
  }
  const after = Date.parse(plan.generatedAt)
  const created: Record<LegacyEntity, number> = { users: 0, groups: 0, members: 0, messages: 0 }
  let count = 0
  for (const r of runs) {
    if (r.mode !== 'delta' || r.startedAt.getTime() < after) {
      continue
    }
    count++
    const entities = (r.stats as { plan?: { entities?: Record<string, { ledger?: { inserted?: unknown } }> } } | null)?.plan?.entities
    for (const e of LEGACY_ENTITIES) {
      const n = entities?.[e]?.ledger?.inserted
      created[e] += typeof n === 'number' ? n : 0
    }
  }
  return { runs: count, created }
}

export function actualVsPlan(
  plan: PlanReport | undefined,
  stats: readonly EntityStats[],
  verified: VerifyReport['entities'],
  since?: PlannedSince,
): ActualVsPlan {
  const byEntity = new Map(stats.map((s) => [s.entity as string, s]))
  const entities = Object.fromEntries(
    LEGACY_ENTITIES.map((e) => {
      const p = plan?.entities[e]
      const s = byEntity.get(e)
      return [
        e,
        {
          plan: p
            ? {
                create: p.toCreate,
                loaded: p.fates.loadedUnchanged + p.fates.loadedChanged,
                skipped: p.skipped.total,
                rejected: p.rejected.total,
                ...(since !== undefined ? { createdSince: since.created[e] } : {}),
              }
            : null,
          ledger: {
            created: s?.created ?? 0,
            alreadyPresent: s?.alreadyPresent ?? 0,
            skipped: s?.skipped ?? 0,
            rejected: s?.rejected ?? 0,
            remaining: s?.remaining ?? 0,
          },
          platform: verified[e].platform,
        },
      ]
    }),
  ) as ActualVsPlan['entities']
  return {
    planRunId: plan?.runId ?? null,
    planGeneratedAt: plan?.generatedAt ?? null,
    ...(since !== undefined ? { deltasSince: since.runs } : {}),
    entities,
  }
}
