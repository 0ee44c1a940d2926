/**
 * What the platform should show for one loaded item after the deltas: its fields from the item's
 * current payload (the ledger advances it when a change is applied, and keeps the loaded one when
 * a change is only reported or ignored), and what no payload says — a user deactivated, a group
 * deleted, a member kicked, a message edited or deleted — from the item's update intents that are
 * done. Pure: verify (`reconcile-entities.ts`, `message-sample.ts`) compares the platform with it,
 * and {@link explainDifference} says which differences an update not applied yet explains.
 */
import type { UpdateKind, UpdateStatus } from '../state/index.ts'
import { JOB_ADVICE, type VerifyAdvice } from './verify-run.ts'

/** One update intent of the item, oldest first. */
export interface ItemUpdate {
  readonly kind: UpdateKind
  readonly status: UpdateStatus
}

type Payload = Readonly<Record<string, unknown>>

/** The compared fields of a user. */
export interface ExpectedUser {
  readonly name: unknown
  readonly avatar: unknown
  readonly link: unknown
  readonly role: unknown
  readonly metadata: unknown
  readonly deactivated: boolean
}

/** The compared fields of a group, and whether it should still exist. */
export interface ExpectedGroup {
  readonly present: boolean
  readonly fields: { readonly name: unknown; readonly type: unknown; readonly icon: unknown; readonly metadata: unknown; readonly owner?: unknown }
}

/** A membership: whether it should exist, in which scope, banned or not. */
export interface ExpectedMember {
  readonly present: boolean
  readonly scope: string
  readonly banned: boolean
}

/** What a message's updates say beyond its payload. */
export interface ExpectedMessageMarks {
  readonly edited: boolean
  readonly deleted: boolean
}

/** The last done update among `kinds`, if any. */
function lastDone(updates: readonly ItemUpdate[], kinds: readonly UpdateKind[]): UpdateKind | undefined {
  let last: UpdateKind | undefined
  for (const u of updates) {
    if (u.status === 'done' && kinds.includes(u.kind)) {
      last = u.kind
    }
  }
  return last
}

/** Absent and null are the same to the comparison. */
const orNull = (v: unknown): unknown => (v === undefined ? null : v)

export function expectedUser(payload: Payload, updates: readonly ItemUpdate[]): ExpectedUser {
  const toggled = lastDone(updates, ['user.deactivate', 'user.reactivate'])
  return {
    name: orNull(payload.name),
    avatar: orNull(payload.avatar),
    link: orNull(payload.link),
    role: payload.role ?? 'default',
    metadata: orNull(payload.metadata),
    deactivated: toggled !== undefined ? toggled === 'user.deactivate' : payload.deactivatedAt !== undefined && payload.deactivatedAt !== null,
  }
}

export function expectedGroup(payload: Payload, updates: readonly ItemUpdate[]): ExpectedGroup {
  return {
    present: lastDone(updates, ['group.delete']) === undefined,
    fields: {
      name: orNull(payload.name),
      type: orNull(payload.type),
      icon: orNull(payload.icon),
      metadata: orNull(payload.metadata),
      ...(payload.owner !== undefined ? { owner: payload.owner } : {}),
    },
  }
}

export function expectedMember(payload: Payload, updates: readonly ItemUpdate[]): ExpectedMember {
  const presence = lastDone(updates, ['member.kick', 'member.add'])
  const ban = lastDone(updates, ['member.ban', 'member.unban'])
  return {
    present: presence !== 'member.kick',
    scope: typeof payload.scope === 'string' ? payload.scope : 'participant',
    banned: ban !== undefined ? ban === 'member.ban' : payload.isBanned === true,
  }
}

export function expectedMessageMarks(updates: readonly ItemUpdate[]): ExpectedMessageMarks {
  return {
    edited: lastDone(updates, ['message.edit']) !== undefined,
    deleted: lastDone(updates, ['message.delete']) !== undefined,
  }
}

/** Whether a difference is explained, and the note that says why (or what is wrong). */
export interface Explanation {
  readonly explained: boolean
  readonly note: string
}

/**
 * Why the platform may differ from the expectation: an applied update still waiting (planned or in
 * flight) explains it; a rejected one does not (the platform refused the change: `chatferry
 * rejects` says why, `chatferry retry-rejected` plans it again once the cause is fixed); an item whose payload changed after loading without an update (a ledger from before
 * updates existed) is explained as before. Otherwise the difference is unexplained.
 */
export function explainDifference(
  updates: readonly ItemUpdate[],
  changed: boolean,
  otherwise: string,
  advice: Pick<VerifyAdvice, 'load' | 'rejects' | 'retry'> = JOB_ADVICE,
): Explanation {
  const waiting = updates.filter((u) => u.status === 'planned' || u.status === 'sent')
  if (waiting.length > 0) {
    return { explained: true, note: `${kindsOf(waiting)} not applied yet (${waiting[0]?.status}): run \`${advice.load}\`` }
  }
  const rejected = updates.filter((u) => u.status === 'rejected')
  if (rejected.length > 0) {
    return {
      explained: false,
      note: `${kindsOf(rejected)} rejected by the platform: \`${advice.rejects}\` says why; once its cause is fixed, \`${advice.retry}\` plans it again and \`${advice.load}\` sends it`,
    }
  }
  // A change held back by `changes.conflicts` is recorded (the platform keeps its own change by decision).
  const dropped = updates.filter((u) => u.status === 'dropped')
  if (dropped.length > 0) {
    return {
      explained: true,
      note: `${kindsOf(dropped)} dropped: the item was changed on the platform after chatferry wrote it and changes.conflicts is platform-wins, so the platform keeps its version`,
    }
  }
  const held = updates.filter((u) => u.status === 'conflict')
  if (held.length > 0) {
    return {
      explained: true,
      note: `${kindsOf(held)} held back: the item was changed on the platform after chatferry wrote it (changes.conflicts: report); to send the source's version set changes.conflicts: source-wins then run \`chatferry retry-rejected --conflicts\` and \`${advice.load}\``,
    }
  }
  if (changed) {
    return { explained: true, note: 'the source changed after loading and no update was recorded for it: the platform has the older version' }
  }
  return { explained: false, note: otherwise }
}

function kindsOf(updates: readonly ItemUpdate[]): string {
  return [...new Set(updates.map((u) => u.kind))].join(', ')
}

/** Values equal as JSON with object keys sorted (metadata from the platform may list keys in another order). */
export function sameValue(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b)
}

function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : value,
  )
}
