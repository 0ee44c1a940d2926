/**
 * The one line a verify report gives the rejects an operator accepted (`chatferry accept-rejects`):
 * not on the platform by decision, so no mismatch, and the command that says who accepted them,
 * when and why. The terminal summary, the HTML report and `fleet verify` print the same words;
 * the plan report says the same of the rejects it finds that an operator accepted before.
 */
import { LEGACY_ENTITIES } from '../model/index.ts'
import type { PlanReport, VerifyReport } from './schema.ts'

export function acceptedRejectsLine(r: Pick<VerifyReport, 'acceptedRejects'>): string | undefined {
  const a = r.acceptedRejects
  if (a === undefined) {
    return undefined
  }
  const counts = LEGACY_ENTITIES.filter((e) => a.entities[e] > 0).map((e) => `${e} ${a.entities[e].toLocaleString('en-US')}`)
  return `accepted rejects, not on the platform by decision: ${counts.join(', ')} (\`${a.command}\` says who accepted them, when and why)`
}

/** The plan report's line: the rejects the ledger holds as accepted, which no longer make a run exit 3. */
export function planAcceptedRejectsLine(r: Pick<PlanReport, 'acceptedRejects'>): string | undefined {
  const a = r.acceptedRejects
  if (a === undefined) {
    return undefined
  }
  const counts = LEGACY_ENTITIES.filter((e) => a.entities[e] > 0).map((e) => `${e} ${a.entities[e].toLocaleString('en-US')}`)
  return `accepted rejects (judged by an operator; they no longer make a run exit 3, new rejects do): ${counts.join(', ')} (\`${a.command}\` says who, when and why)`
}
