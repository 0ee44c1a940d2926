/**
 * One claimed update from claim to settlement:
 *
 * 1. a message's platform id: `items.platform_id`, else looked up in the chat list
 *    (find-platform-message.ts) and recorded; not found → rejected `MESSAGE_NOT_ON_PLATFORM`;
 * 2. when an earlier call may have reached the platform (found `sent` after a crash, or a timeout /
 *    5xx / lost connection in this process), the platform's state is checked first
 *    (check-ambiguous-update.ts): already there → done without a call;
 * 3. at a slot of the chat budget: recorded `sent` (fenced by the lease), then the call;
 * 4. the answer: 2xx → done; a refusal (4xx with its code) → checked once (the platform may hold the
 *    state already), else rejected with its code, reason and status, and the run goes on; refused
 *    credentials → the run stops (update-failure-rule.ts); 5xx / timeouts / lost connections → retried with jittered backoff
 *    up to `load.maxAttempts`, then handed back still `sent` (checked before the next try), and
 *    counted toward the outage give-up (`load.giveUpAfterMs`), like the import loader.
 */
import type { ClaimedUpdate, UpdateHandBack } from '../state/update-lane-ledger.ts'
import { PlatformError } from '../target/errors.ts'
import { APPLIED_KINDS, applyUpdate, type ResolvedUpdate } from './apply-update.ts'
import { platformHasUpdate } from './check-ambiguous-update.ts'
import { describeCause } from './failure-rule.ts'
import { FatalLoadError } from './fatal-load-error.ts'
import { findPlatformMessage, messageShapeOf } from './find-platform-message.ts'
import { settleIfDeactivatedMember } from './settle-deactivated-member.ts'
import { sleep } from './sleep.ts'
import { judgeUpdateFailure } from './update-failure-rule.ts'
import type { UpdateLaneRun } from './update-lane-run.ts'

/** Why the update cannot be applied as recorded: rejected with this code (nothing was sent). */
class UpdateRefusal extends Error {
  readonly code: string
  readonly httpStatus: number | null
  constructor(code: string, message: string, httpStatus: number | null = null) {
    super(message)
    this.code = code
    this.httpStatus = httpStatus
  }
}

/** The body recorded for the update, as an object. */
function parseBody(u: ClaimedUpdate): Record<string, unknown> {
  let body: unknown
  try {
    body = JSON.parse(u.body)
  } catch {
    throw new UpdateRefusal('INVALID_UPDATE_BODY', `the recorded body of ${u.kind} ${u.targetKey} is not JSON`)
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new UpdateRefusal('INVALID_UPDATE_BODY', `the recorded body of ${u.kind} ${u.targetKey} is not a JSON object`)
  }
  return body as Record<string, unknown>
}

/** The update with its body parsed and, for a message, its platform id (looked up and recorded when missing). */
async function resolve(lane: UpdateLaneRun, u: ClaimedUpdate): Promise<ResolvedUpdate> {
  if (!(APPLIED_KINDS as readonly string[]).includes(u.kind)) {
    throw new UpdateRefusal('UNSUPPORTED_UPDATE_KIND', `${u.kind} is not applied through the chat interface (only reported)`)
  }
  const body = parseBody(u)
  if (u.entity !== 'messages') {
    return { kind: u.kind, targetKey: u.targetKey, body }
  }
  if (u.platformId !== null) {
    return { kind: u.kind, targetKey: u.targetKey, body, messageId: u.platformId }
  }
  const shape = messageShapeOf(u.itemPayload)
  const found =
    shape === undefined ? undefined : await lane.chatCall(() => findPlatformMessage(lane.options.client, shape, lane.options.legacyMetadataKey))
  if (found?.value === undefined) {
    throw new UpdateRefusal(
      'MESSAGE_NOT_ON_PLATFORM',
      `the message ${u.targetKey} (legacy id ${u.legacyId}) has no recorded platform id and the chat list of its conversation does not hold it`,
    )
  }
  await lane.ledger.recordPlatformId(lane.options.jobId, u.entity, u.targetKey, found.value)
  return { kind: u.kind, targetKey: u.targetKey, body, messageId: found.value }
}

/** Settles `done`; counts it (a lost lease is counted as fenced). */
async function settleDone(lane: UpdateLaneRun, u: ClaimedUpdate, httpStatus: number | null): Promise<void> {
  if (await lane.ledger.done(u.id, lane.owner, httpStatus)) {
    lane.count('done', u.kind)
    if (httpStatus === null) {
      lane.counters.confirmed++
    }
  } else {
    lane.counters.fenced++
  }
}

async function settleRejected(
  lane: UpdateLaneRun,
  u: ClaimedUpdate,
  error: { code: string; message: string; httpStatus: number | null },
): Promise<void> {
  if (await lane.ledger.reject(u.id, lane.owner, error)) {
    lane.count('rejected', u.kind)
    lane.log.warn({ update: u.id, kind: u.kind, key: u.targetKey, legacyId: u.legacyId, code: error.code }, `update rejected: ${error.message}`)
  } else {
    lane.counters.fenced++
  }
}

async function handBack(lane: UpdateLaneRun, u: ClaimedUpdate, why: UpdateHandBack): Promise<void> {
  if (await lane.ledger.release(u.id, lane.owner, why)) {
    lane.counters.handedBack++
  } else {
    lane.counters.fenced++
  }
}

/** Whether the platform already holds the update's state (one read at a chat slot). */
async function alreadyThere(lane: UpdateLaneRun, r: ResolvedUpdate): Promise<boolean> {
  const answer = await lane.chatCall(() => platformHasUpdate(lane.options.client, r))
  return answer?.value === true
}

/** Applies one claimed update and settles it (see the file's header). Never throws for the platform's answers. */
export async function processUpdate(lane: UpdateLaneRun, u: ClaimedUpdate): Promise<void> {
  const state: AttemptState = { attempt: 0, ambiguous: u.status === 'sent', resolved: undefined }
  for (;;) {
    state.attempt++
    try {
      return await attemptUpdate(lane, u, state)
    } catch (err) {
      if ((await afterFailure(lane, u, err, state)) === 'settled') {
        return
      }
      await sleep(retryDelayMs(lane, err, state.attempt), lane.stop.signal).catch(() => {})
      if (lane.stop.signal.aborted) {
        const why = lane.fatal?.message ?? 'the update lane was stopped'
        return handBack(lane, u, { ambiguous: state.ambiguous, countAttempt: false, code: 'STOPPED', message: why, httpStatus: null })
      }
    }
  }
}

/** Where one update's attempts stand. */
interface AttemptState {
  attempt: number
  /** An earlier call may have reached the platform: check before sending again. */
  ambiguous: boolean
  resolved: ResolvedUpdate | undefined
}

/** One try: resolve, check when ambiguous, mark sent at a slot, call, settle the answer. */
async function attemptUpdate(lane: UpdateLaneRun, u: ClaimedUpdate, state: AttemptState): Promise<void> {
  const r = (state.resolved ??= await resolve(lane, u))
  if (state.ambiguous && (await alreadyThere(lane, r))) {
    return settleDone(lane, u, null)
  }
  const answer = await lane.chatCall(
    () => applyUpdate(lane.options.client, r),
    async () => {
      const marked = await lane.ledger.markSent(u.id, lane.owner, lane.leaseSeconds)
      state.ambiguous ||= marked
      return marked
    },
  )
  if (answer === undefined) {
    // The lease was lost before the call: another process holds the update now.
    lane.counters.fenced++
    return
  }
  if (answer.value.outcome === 'applied') {
    return settleDone(lane, u, 200)
  }
  const refusal =
    answer.value.outcome === 'refused'
      ? { code: answer.value.code, message: answer.value.message, httpStatus: 200 }
      : { code: 'UNCHANGED', message: `the platform answered that ${r.targetKey} was left as it was`, httpStatus: 200 }
  return refused(lane, u, r, refusal)
}

/** A refusal: done when the platform holds the state anyway, else rejected with the platform's code. */
async function refused(
  lane: UpdateLaneRun,
  u: ClaimedUpdate,
  r: ResolvedUpdate,
  refusal: { code: string; message: string; httpStatus: number | null },
): Promise<void> {
  let there = false
  try {
    there = await alreadyThere(lane, r)
  } catch (err) {
    lane.log.debug({ err, update: u.id }, 'checking a refused update failed; it is rejected as refused')
  }
  if (there) {
    return settleDone(lane, u, refusal.httpStatus)
  }
  if (await settleIfDeactivatedMember(lane, u, r, refusal)) {
    return
  }
  return settleRejected(lane, u, refusal)
}

/** A message update refused because its `onBehalfOf` sender is unknown or deactivated (not yet retried as the app). */
function senderGone(r: ResolvedUpdate, err: PlatformError): boolean {
  return (r.kind === 'message.edit' || r.kind === 'message.delete') && r.asApp !== true && err.code === 'ERR_UID_NOT_FOUND'
}

/** Jittered exponential backoff between attempts of one update (250 ms … 8 s). */
function backoffMs(attempt: number): number {
  return Math.min(8000, 250 * 2 ** (attempt - 1)) * (0.5 + Math.random())
}

/**
 * How long to wait before the next attempt. After a timeout or a lost connection the earlier
 * request may still be on its way to the platform or in its hands (nothing tells it to stop), so
 * the check before sending again waits at least one request timeout longer: a check made at once
 * could miss an edit that lands a moment later, and the update would be sent twice.
 */
function retryDelayMs(lane: UpdateLaneRun, err: unknown, attempt: number): number {
  const mayStillLand = err instanceof PlatformError && (err.kind === 'timeout' || err.kind === 'network')
  return mayStillLand ? Math.max(backoffMs(attempt), lane.options.timeoutMs) : backoffMs(attempt)
}

/**
 * What a failure means: `settled` (rejected, handed back, or the run halted) or `retry`. Refusals
 * reject, credentials stop the run, transient failures retry until `load.maxAttempts`.
 */
async function afterFailure(lane: UpdateLaneRun, u: ClaimedUpdate, err: unknown, at: AttemptState): Promise<'settled' | 'retry'> {
  if (err instanceof UpdateRefusal) {
    await settleRejected(lane, u, { code: err.code, message: err.message, httpStatus: err.httpStatus })
    return 'settled'
  }
  if (lane.stop.signal.aborted && !(err instanceof PlatformError)) {
    await handBack(lane, u, {
      ambiguous: at.ambiguous,
      countAttempt: false,
      code: 'STOPPED',
      message: 'the update lane was stopped',
      httpStatus: null,
    })
    return 'settled'
  }
  if (err instanceof TypeError) {
    // The client refused the body before sending it: the recorded update is not a valid call.
    await settleRejected(lane, u, { code: 'INVALID_UPDATE_BODY', message: err.message, httpStatus: null })
    return 'settled'
  }
  if (!(err instanceof PlatformError)) {
    throw err
  }
  return platformFailure(lane, u, err, at)
}

async function platformFailure(lane: UpdateLaneRun, u: ClaimedUpdate, err: PlatformError, at: AttemptState): Promise<'settled' | 'retry'> {
  const verdict = judgeUpdateFailure(err)
  if (verdict === 'stop') {
    lane.halt(new FatalLoadError(`the platform refused the request: ${err.message}`, { cause: err }))
    await handBack(lane, u, { ambiguous: at.ambiguous, countAttempt: false, code: err.code, message: err.message, httpStatus: err.status ?? null })
    return 'settled'
  }
  if (verdict === 'reject' && at.resolved !== undefined && senderGone(at.resolved, err)) {
    // The sender is deactivated on the platform: edit or delete as the app instead (once).
    lane.log.info({ update: u.id, kind: u.kind, key: u.targetKey }, 'the sender is deactivated: the app edits the message instead')
    at.resolved = { ...at.resolved, asApp: true }
    return 'retry'
  }
  if (verdict === 'reject') {
    const refusal = { code: err.code, message: err.message, httpStatus: err.status ?? null }
    await (at.resolved === undefined ? settleRejected(lane, u, refusal) : refused(lane, u, at.resolved, refusal))
    return 'settled'
  }
  lane.watch.failure(describeCause(err))
  if (lane.watch.exceeded()) {
    lane.halt(new FatalLoadError(lane.watch.giveUpMessage()))
  }
  if (at.attempt >= lane.options.settings.maxAttempts || lane.stop.signal.aborted) {
    await handBack(lane, u, { ambiguous: at.ambiguous, countAttempt: true, code: err.code, message: err.message, httpStatus: err.status ?? null })
    return 'settled'
  }
  return 'retry'
}
