/**
 * The conflict policy in the dry run (`chatferry plan`): which `apply` intents of a page a delta
 * would hold back because their item changed on the platform after chatferry last wrote it (a
 * platform event `chatferry webhooks receive` stored). The ledger answers read-only with the rule a
 * delta records by (src/state/conflict-hold.ts); the answers are tallied per kind by what
 * `changes.conflicts` does with them — `conflict` (report: held back), `dropped` (platform-wins) or
 * `overwrites` (source-wins: sent over the platform's change) — with samples whose reason names the
 * platform's trigger and when it was received.
 */
import type { LegacyEntity } from '../model/index.ts'
import type { ChangeClassifier, ConflictPolicy, UpdateKind, UpdatePolicy } from '../state/index.ts'
import type { ClassifyInto } from './classify-items.ts'
import { tallyOne } from './update-tally.ts'

/** An intent the classifier returned for a changed item, with the item's keys. */
export interface FoundIntent {
  readonly kind: UpdateKind
  readonly policy: UpdatePolicy
  readonly legacyId: string
  readonly targetKey: string
  readonly reason: string
}

/** The classifier, unchanged, also keeping each intent it returns in `found`. */
export function collectingClassifier(classify: ChangeClassifier): { classify: ChangeClassifier; found: FoundIntent[] } {
  const found: FoundIntent[] = []
  return {
    found,
    classify: (item) => {
      const verdict = classify(item)
      for (const i of verdict.intents) {
        found.push({ kind: i.kind, policy: i.policy, legacyId: item.legacyId, targetKey: item.targetKey, reason: i.reason })
      }
      return verdict
    },
  }
}

/** Asks the ledger about the page's intents (one query; none without a sendable intent) and tallies the conflicts. */
export async function previewPageConflicts(
  into: ClassifyInto,
  entity: LegacyEntity,
  found: readonly FoundIntent[],
  policy: ConflictPolicy,
): Promise<void> {
  if (found.length === 0) {
    return
  }
  const mine = into.entities[entity]
  for (const c of await into.session.conflicts(into.jobId, entity, found, policy)) {
    tallyOne(mine.conflicts, c.intent.kind, c.outcome, { ...c.intent, reason: c.reason })
  }
}
