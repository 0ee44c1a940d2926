/**
 * The sign-off section of verify: per entity, what the latest plan report said a load would
 * create (or found loaded), skip and reject, next to what the ledger now holds and what verify found on the platform.
 */
import { LEGACY_ENTITIES } from '../model/index.ts'
import type { EntityStats } from '../state/store.ts'
import type { ActualVsPlan, PlanReport, VerifyReport } from './schema.ts'

export function actualVsPlan(plan: PlanReport | undefined, stats: readonly EntityStats[], verified: VerifyReport['entities']): ActualVsPlan {
  const byEntity = new Map(stats.map((s) => [s.entity as string, s]))
  const entities = Object.fromEntries(
    LEGACY_ENTITIES.map((e) => {
      const p = plan?.entities[e]
      const s = byEntity.get(e)
      return [
        e,
        {
          plan: p
            ? { create: p.toCreate, loaded: p.fates.loadedUnchanged + p.fates.loadedChanged, skipped: p.skipped.total, rejected: p.rejected.total }
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
  return { planRunId: plan?.runId ?? null, planGeneratedAt: plan?.generatedAt ?? null, entities }
}
