/**
 * The one line a verify report gives the rejects an operator accepted (`chatferry accept-rejects`):
 * not on the platform by decision, so no mismatch, and the command that says who accepted them,
 * when and why. The terminal summary, the HTML report and `fleet verify` print the same words.
 */
import { LEGACY_ENTITIES } from '../model/index.ts'
import type { VerifyReport } from './schema.ts'

export function acceptedRejectsLine(r: Pick<VerifyReport, 'acceptedRejects'>): string | undefined {
  const a = r.acceptedRejects
  if (a === undefined) {
    return undefined
  }
  const counts = LEGACY_ENTITIES.filter((e) => a.entities[e] > 0).map((e) => `${e} ${a.entities[e].toLocaleString('en-US')}`)
  return `accepted rejects, not on the platform by decision: ${counts.join(', ')} (\`${a.command}\` says who accepted them, when and why)`
}
