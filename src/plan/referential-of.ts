/** The referential problems of a mapped record: references to unknown users, groups or thread parents. */
import type { MapResult } from '../../mappings/index.ts'
import type { LegacyEntity } from '../model/index.ts'

/** Referential problems named by a mapping result (unknown users, groups, parents). */
export function referentialOf(entity: LegacyEntity, result: MapResult, parentSkipped: boolean): string[] {
  if (result.kind === 'rejected') {
    const rejectedRef = /^its (sender|receiver|user) .* was rejected \(/.exec(result.reason)?.[1]
    if (rejectedRef !== undefined) {
      return [entity === 'members' ? 'member whose user was rejected' : `message ${rejectedRef === 'sender' ? 'from' : 'to'} a rejected user`]
    }
    if (!result.reason.startsWith('unknown user') && !result.reason.startsWith('unknown group')) {
      return []
    }
    const what = result.reason.startsWith('unknown user') ? 'user' : 'group'
    if (entity === 'members') {
      return [`member of unknown ${what}`]
    }
    if (entity === 'messages') {
      return [result.field === 'senderId' ? 'message from unknown user' : `message to unknown ${what}`]
    }
    return []
  }
  if (result.kind !== 'items') {
    return []
  }
  const out: string[] = []
  for (const o of result.outcomes) {
    if (o.policy === 'missingUsers' && o.outcome === 'sender-placeholder') {
      out.push('message from unknown user (placeholder)')
    } else if (o.policy === 'missingUsers' && o.outcome === 'receiver-placeholder') {
      out.push('message to unknown user (placeholder)')
    } else if (o.policy === 'threads' && o.outcome === 'parent-unknown') {
      out.push(parentSkipped ? 'reply to a thread parent skipped by policy' : 'reply to unknown thread parent')
    } else if (o.policy === 'groupOwner' && o.outcome === 'unknown-omitted') {
      out.push('group owned by unknown user')
    }
  }
  return out
}
