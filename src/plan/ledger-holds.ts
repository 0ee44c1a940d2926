/**
 * Whether the ledger holds items of an entity, as the dry run asks it for every page: with none,
 * a page's items are all new and nothing is looked up. A "yes" is kept for the run (items are not
 * removed under a plan); a "no" for {@link NONE_KEPT_MS}, then asked again, so that one question
 * stands for many pages instead of one each. Within that time a concurrent run may plan items the
 * dry run then counts as new rather than pending: both are sends, so the report never promises
 * less work than there is. (Should that run also load one within the same two seconds, a message
 * the dry run finds skipped is not previewed as a removal of it: the report is a preview, and
 * the delta that follows compares against the ledger as it is.)
 */
import type { DryRunSession } from '../state/index.ts'

/** How long a "none" answer stands. */
export const NONE_KEPT_MS = 2_000

/** `session` with its `hasItems` answered as described above (absent stays absent). */
export function withCachedHasItems(session: DryRunSession, now: () => number = Date.now): DryRunSession {
  const ask = session.hasItems
  if (ask === undefined) {
    return session
  }
  const holds = new Set<string>()
  const noneSince = new Map<string, number>()
  return {
    ...session,
    async hasItems(jobId, entity) {
      const key = `${jobId}\u0000${entity}`
      if (holds.has(key)) {
        return true
      }
      const since = noneSince.get(key)
      if (since !== undefined && now() - since < NONE_KEPT_MS) {
        return false
      }
      const asked = now()
      const any = await ask.call(session, jobId, entity)
      if (any) {
        holds.add(key)
        noneSince.delete(key)
      } else {
        noneSince.set(key, asked)
      }
      return any
    },
  }
}
