/**
 * The platform id of a loaded message whose import answer was not recorded (loaded before the
 * loader kept `items.platform_id`, or answered "already exists"): the chat list of its
 * conversation at its `sentAt` second is read, and the message is matched the way `verify` matches
 * (src/target/message-match.ts): by the legacy id chatferry wrote into `data.metadata`, else by
 * sender, receiver, sentAt and text. Nothing matched → undefined (the lane rejects the update with
 * `MESSAGE_NOT_ON_PLATFORM`, never guessing); two messages that match equally → undefined too.
 */
import type { PlatformClient } from '../target/client.ts'
import { fingerprintOf, legacyKeyOf, type MessageShape } from '../target/message-match.ts'

/** A page of the list is this long; a second with more messages than this is read page after page. */
const PAGE = 100

/** The documented conversation id of a message: `group_<guid>`, or the two uids sorted and joined by `_user_`. */
export function conversationIdOf(m: Pick<MessageShape, 'sender' | 'receiverType' | 'receiver'>): string {
  if (m.receiverType === 'group') {
    return `group_${m.receiver}`
  }
  const [a, b] = [m.sender, m.receiver].sort()
  return `${a}_user_${b}`
}

/** The stored import payload of a message as a {@link MessageShape}, or undefined when it is not one. */
export function messageShapeOf(payload: string | null): MessageShape | undefined {
  if (payload === null) {
    return undefined
  }
  const p = JSON.parse(payload) as Partial<MessageShape>
  if (typeof p.sender !== 'string' || typeof p.receiver !== 'string' || typeof p.receiverType !== 'string' || typeof p.sentAt !== 'number') {
    return undefined
  }
  return { sender: p.sender, receiver: p.receiver, receiverType: p.receiverType, sentAt: p.sentAt, data: p.data }
}

/** Finds the platform id of `want` (its payload as loaded); undefined when no single message matches. */
export async function findPlatformMessage(
  client: PlatformClient,
  want: MessageShape,
  metadataKey: string,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const legacy = legacyKeyOf(want, metadataKey)
  const fingerprint = fingerprintOf(want)
  const hits: string[] = []
  const query = { conversationId: conversationIdOf(want), fromTimestamp: want.sentAt, toTimestamp: want.sentAt, limit: PAGE }
  for await (const m of client.messages(query, signal)) {
    const shape = { ...m, data: m.data }
    const matches =
      legacy !== undefined && legacyKeyOf(shape, metadataKey) !== undefined
        ? legacyKeyOf(shape, metadataKey) === legacy
        : fingerprintOf(shape) === fingerprint
    if (matches) {
      hits.push(m.id)
    }
  }
  return hits.length === 1 ? hits[0] : undefined
}
