/**
 * What `chatferry verify` reads from the ledger to reconcile it with the platform: open items,
 * the fate of every user, group and member, done messages per conversation, a deterministic
 * sample of done messages, the messages of one conversation (with their payloads), the legacy records accounted
 * for, the update intents of items (what the platform should show beyond their payloads), and the
 * copied files whose legacy URLs sampled texts name (`files.rewriteTextLinks`). Read-only.
 */
import type { Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'
import { type ConversationCountRow, countDoneMessagesPerConversation } from './sql/count-done-messages-per-conversation.ts'
import { countLegacyRecords } from './sql/count-legacy-records.ts'
import { countOpenItems } from './sql/count-open-items.ts'
import { type ConversationMessageRow, selectConversationMessages } from './sql/select-conversation-messages.ts'
import { selectCopiedFileLinks } from './sql/select-copied-file-links.ts'
import { type ItemStateRow, selectItemStates } from './sql/select-item-states.ts'
import { type ItemUpdateRow, selectItemUpdates } from './sql/select-item-updates.ts'
import { type MessageSampleRow, selectMessageSample } from './sql/select-message-sample.ts'

export type { ConversationCountRow, ConversationMessageRow, ItemStateRow, ItemUpdateRow, MessageSampleRow }

export interface VerifyLookups {
  /** Items not loaded (planned, sent or rejected), per entity. */
  openItems(jobId: string): Promise<{ entity: string; n: number }[]>
  /** Every user, group and member item, whatever its status. */
  itemStates(jobId: string): Promise<ItemStateRow[]>
  /**
   * Done messages per conversation (`group_<guid>` or `<uid>_user_<uid>`), with a digest of the
   * legacy ids their payloads carry under `data.metadata[metadataKey]`.
   */
  doneMessagesPerConversation(jobId: string, metadataKey: string): Promise<ConversationCountRow[]>
  /** Up to `size` done messages, the same ones every time for the same ledger. */
  messageSample(jobId: string, size: number): Promise<MessageSampleRow[]>
  /** Every message item of one conversation, whatever its status, with its payload. */
  conversationMessages(jobId: string, conversation: string): Promise<ConversationMessageRow[]>
  /** Distinct legacy records per entity (extra items excluded). */
  legacyRecords(jobId: string): Promise<{ entity: string; n: number }[]>
  /** The update intents of an entity's items (all, or of `targetKeys`), oldest first per item; superseded ones left out. */
  itemUpdates(jobId: string, entity: string, targetKeys?: readonly string[]): Promise<ItemUpdateRow[]>
  /** The copied files of the job among these legacy URLs: legacy URL → public URL. */
  copiedFileLinks(jobId: string, legacyUrls: readonly string[]): Promise<Map<string, string>>
}

export function createVerifyLookups(db: Kysely<StateDatabase>): VerifyLookups {
  return {
    openItems: (jobId) => countOpenItems(db, jobId),
    itemStates: (jobId) => selectItemStates(db, jobId),
    doneMessagesPerConversation: (jobId, metadataKey) => countDoneMessagesPerConversation(db, jobId, metadataKey),
    messageSample: (jobId, size) => selectMessageSample(db, jobId, size),
    conversationMessages: (jobId, conversation) => selectConversationMessages(db, jobId, conversation),
    legacyRecords: (jobId) => countLegacyRecords(db, jobId),
    itemUpdates: (jobId, entity, targetKeys) => selectItemUpdates(db, jobId, entity, targetKeys),
    copiedFileLinks: (jobId, legacyUrls) => selectCopiedFileLinks(db, jobId, legacyUrls),
  }
}
