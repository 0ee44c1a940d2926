/**
 * What a message says in `mapMessage`: its text, attachments, custom data, type and category, with
 * the policies that decide it: `deletes` (a tombstone), `brokenAttachments`, custom messages,
 * `systemMessages` (text only) and `emptyMessages`, which the platform refuses.
 */
import type { JsonObject } from '../src/model/index.ts'
import { Rejection, Skip } from './common.ts'
import { MEDIA_TYPES, mediaTypeOf, usableAttachments } from './message-attachments.ts'
import { tombstone } from './message-deletes.ts'
import type { MessageContent, MessageScope } from './message-scope.ts'

export function messageContent(s: MessageScope): MessageContent {
  if (s.deleted) {
    return tombstone(s)
  }
  const { record, ctx } = s
  let text = record.text ?? ''
  let attachments = usableAttachments(s)
  let customData: JsonObject | undefined
  let type: string
  let category: 'message' | 'custom' = 'message'
  if (record.type === 'custom') {
    if (record.customData === undefined || record.customData === null) {
      throw new Rejection('customData', 'a custom message without customData')
    }
    category = 'custom'
    type = 'custom'
    customData = record.customData
  } else if (attachments.length > 0) {
    type = MEDIA_TYPES.has(record.type) ? record.type : mediaTypeOf(attachments)
  } else {
    type = 'text'
  }
  if (s.system) {
    // Sent as a text message from the system user: its text, or its kind when it has none.
    if (text.trim() === '') {
      text = `[${record.systemKind}]`
    }
    attachments = []
    type = 'text'
  }
  if (category === 'message' && type === 'text' && text.trim() === '') {
    if (ctx.policies.emptyMessages === 'reject') {
      throw new Rejection('text', 'empty text and no attachments', 'emptyMessages')
    }
    throw new Skip('emptyMessages', 'skipped', 'empty text and no attachments')
  }
  return { text, attachments, customData, type, category }
}
