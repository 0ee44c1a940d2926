/**
 * The classifier planning hands the ledger with each page (`PlanPage.changes`): a changed loaded
 * item's intents from {@link changeIntents}, tallied into the entity's summary, and whether its
 * stored payload advances ({@link advancesPayload}).
 */
import type { LegacyEntity } from '../model/index.ts'
import type { ChangeClassifier } from '../state/index.ts'
import { advancesPayload, changeIntents, type ChangePolicies } from './change-intents.ts'
import { tallyIntents, type UpdateTally } from './update-tally.ts'

export function changeClassifier(entity: LegacyEntity, policies: ChangePolicies, tally: UpdateTally): ChangeClassifier {
  return (item) => {
    const intents = changeIntents(entity, item.before, item.after, policies)
    tallyIntents(
      tally,
      intents.map((i) => ({ ...i, legacyId: item.legacyId, targetKey: item.targetKey })),
    )
    return { intents, advance: advancesPayload(intents) }
  }
}
