/**
 * The oracle's message participants (mappings/README.md `missingUsers`, `systemMessages`,
 * dependencies): the sender and receiver of a message, the placeholder users and the system user
 * it brings, or why it is skipped or rejected.
 */
import type { LegacyMessage } from '../../src/model/index.ts'
import { type ItemFacts, state } from './expected-facts.ts'
import { idHash } from './expected-ids.ts'
import { expectItem, isPlanned, nameFacts, type Outcome, type PlannedUserRef, type World } from './expected-world.ts'

/** A sender or one-to-one receiver: planned, a placeholder for an unknown user, or the reason it cannot be. */
function participant(w: World, legacyId: string): PlannedUserRef | { rejected: true } | { skipped: true } {
  const ref = w.users.get(legacyId)
  if (ref === undefined) {
    return placeholder(w, legacyId)
  }
  if ('rejected' in ref) {
    return { rejected: true }
  }
  return 'skipped' in ref ? { skipped: true } : ref
}

/** A user chatferry adds (a placeholder, the system user): a name and tags, nothing else the platform shows. */
function extraUserFacts(name: string, tags: string[]): ItemFacts {
  const facts: ItemFacts = new Map()
  nameFacts(facts, name)
  state(facts, ['tags'], { eq: tags })
  for (const k of ['avatar', 'link', 'last_active_at', 'deactivated_at']) {
    state(facts, [k], { eq: null })
  }
  state(facts, ['role'], { eq: 'default' })
  return facts
}

/** `missingUsers: placeholder`: one user per unknown legacy id, stated once. */
function placeholder(w: World, legacyId: string): PlannedUserRef {
  const mu = w.policies.missingUsers
  const uid = `${mu.uidPrefix}${idHash(legacyId)}`
  const name = mu.name.replaceAll('{id}', legacyId)
  if (!w.items.users.has(uid)) {
    const facts = extraUserFacts(name, [mu.tag])
    // `{placeholder: true, id}` in metadata, under chatferry's key.
    state(facts, ['metadata'], { keys: ['legacy'] })
    state(facts, ['metadata', 'legacy', 'placeholder'], { eq: true })
    state(facts, ['metadata', 'legacy', 'id'], { eq: legacyId })
    expectItem(w, 'users', uid, `~placeholder:${uid}`, facts)
  }
  return { uid, name }
}

/** `systemMessages: as-user`: the system user, created once. */
function systemUser(w: World): PlannedUserRef {
  const { uid, name } = w.policies.systemMessages
  if (w.taken.users.has(uid)) {
    throw new Error(`expected-items: a legacy user holds the system user's uid ${uid}; its distinct uid is not modelled`)
  }
  if (!w.items.users.has(uid)) {
    expectItem(w, 'users', uid, `~system-user:${uid}`, extraUserFacts(name, []))
  }
  return { uid, name }
}

/** Sender and receiver: an unknown or rejected group, a rejected user → rejected; skipped ones skip the message. */
export function participants(w: World, m: LegacyMessage, asSystem: boolean): Outcome<{ sender: PlannedUserRef; receiver: string }> {
  let receiver: string
  if (m.receiverType === 'group') {
    const g = w.groups.get(m.receiverId)
    if (g === undefined || 'rejected' in g) {
      return { reject: 'receiverId' }
    }
    if (!isPlanned(g)) {
      return { skip: 'dependencies' }
    }
    receiver = g.guid
  } else {
    const r = participant(w, m.receiverId)
    if ('rejected' in r || 'skipped' in r) {
      return 'rejected' in r ? { reject: 'receiverId' } : { skip: 'dependencies' }
    }
    receiver = r.uid
  }
  const sender = asSystem ? systemUser(w) : participant(w, m.senderId)
  if ('rejected' in sender || 'skipped' in sender) {
    return 'rejected' in sender ? { reject: 'senderId' } : { skip: 'dependencies' }
  }
  return { sender, receiver }
}
