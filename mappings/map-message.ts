/**
 * Legacy message → one or more `MessageImport` items.
 *
 * Policies, in the order they are applied (the first that skips a message is the one counted):
 * retention → deletes → systemMessages → threads (skip) → brokenAttachments → emptyMessages →
 * missingUsers / dependencies → threads (flatten, quote) → edits → mentions → reactions →
 * fieldLimits (metadata) → longText → userModule. Each has its file, `message-<policy>.ts`; this
 * one composes them and builds the items.
 */
import type { LegacyMessage } from '../src/model/index.ts'
import { jsonSizeBound, LIMITS, type MessageData, type UserDetails } from '../src/target/schemas.ts'
import { cleanRecord } from './clean-record.ts'
import { finish, guard, optionalSeconds, Outcomes, Rejection, requiredSeconds } from './common.ts'
import { messageMuid, partMuid } from './ids.ts'
import { messageContent } from './message-content.ts'
import { createMessageDataBuilder } from './message-data-builder.ts'
import { skipDeleted } from './message-deletes.ts'
import { applyEdits } from './message-edits.ts'
import { fitLongText, partMarker } from './message-long-text.ts'
import { mentionedUserDetails, rewriteMessageMentions } from './message-mentions.ts'
import { receiverOf, senderOf } from './message-participants.ts'
import { applyReactions } from './message-reactions.ts'
import { applyRetention } from './message-retention.ts'
import { type MessageScope, messageScope } from './message-scope.ts'
import { partSortKey, sortBaseOf } from './message-sort-key.ts'
import { skipSystemMessage } from './message-system.ts'
import { flattenReply, skipReply } from './message-threads.ts'
import type { MappedItem, MappingContext, MapResult } from './types.ts'

export function mapMessage(record: LegacyMessage, ctx: MappingContext): MapResult<'messages'> {
  const out = new Outcomes()
  return guard(out, () => {
    record = cleanRecord('messages', record, ctx, out)
    if (typeof record.id !== 'string' || record.id === '') {
      throw new Rejection('id', 'message id is missing')
    }
    const muid = messageMuid(record.id)
    const sentAt = requiredSeconds(record.sentAt, 'sentAt')
    const s = messageScope(record, ctx, out)

    // Policies that skip the whole message.
    applyRetention(s)
    skipDeleted(s)
    skipSystemMessage(s)
    skipReply(s)

    const content = messageContent(s)
    const extraItems: MappedItem<'users'>[] = []
    const sender = senderOf(s, extraItems)
    const receiver = receiverOf(s, extraItems)
    const replyText = flattenReply(s, content.text)
    applyEdits(s)
    const { text, details } = rewriteMessageMentions(s, replyText)
    applyReactions(s)

    const head: MessageHead = {
      muid,
      sender,
      receiver,
      category: content.category,
      type: content.type,
      sentAt,
      deliveredAt: optionalSeconds(record.deliveredAt, 'deliveredAt', ctx, out),
      readAt: optionalSeconds(record.readAt, 'readAt', ctx, out),
      details,
      sortBase: sortBaseOf(record.sentAt, muid),
    }
    const data = createMessageDataBuilder(s, content)
    // Most messages are far below the limit, which a bound of the whole data's JSON size shows
    // without serialising it (the margin covers the `"text":""` the skeleton counts).
    const whole = data.of(text, content.attachments)
    if (jsonSizeBound(whole, LIMITS.MESSAGE_DATA_BYTES_MAX) + 16 <= LIMITS.MESSAGE_DATA_BYTES_MAX) {
      return { kind: 'items', items: [messageItem(s, head, text, whole, 1)], extraItems, outcomes: out.list }
    }
    const texts = fitLongText(s, text, data)
    const items = texts.map((t, i) =>
      // Parts after the first carry only text: the first part holds the attachments.
      messageItem(s, head, t, data.of(t, i === 0 ? content.attachments : [], partMarker(texts, i, text, muid)), i + 1),
    )
    return { kind: 'items', items, extraItems, outcomes: out.list }
  })
}

/** What every part of a message shares. */
interface MessageHead {
  readonly muid: string
  readonly sender: string
  readonly receiver: string
  readonly category: 'message' | 'custom'
  readonly type: string
  readonly sentAt: number
  readonly deliveredAt: number | undefined
  readonly readAt: number | undefined
  readonly details: Map<string, UserDetails> | undefined
  readonly sortBase: string
}

/** Part `n` (from 1) of the message, with text `t` and its `data`. */
function messageItem({ record, ctx, out }: MessageScope, head: MessageHead, t: string, data: MessageData, n: number): MappedItem<'messages'> {
  // Built in one literal (no `compact`, no spread): this runs at least once per message.
  const payload: Record<string, unknown> = {
    muid: n === 1 ? head.muid : partMuid(head.muid, n),
    sender: head.sender,
    receiverType: record.receiverType,
    receiver: head.receiver,
    category: n === 1 ? head.category : 'message',
    type: n === 1 ? head.type : 'text',
    // In the schema's order (data before sentAt): the item is then taken as it is, not rebuilt by zod.
    data,
    sentAt: head.sentAt,
  }
  if (head.deliveredAt !== undefined) {
    payload.deliveredAt = head.deliveredAt
  }
  if (head.readAt !== undefined) {
    payload.readAt = head.readAt
  }
  if (head.details !== undefined) {
    const mentioned = mentionedUserDetails(head.details, t)
    if (mentioned !== undefined) {
      payload.mentionedUserDetails = mentioned
    }
  }
  return finish('messages', payload, record, ctx, out, partSortKey(head.sortBase, n))
}
