/** How an item's payload is stored: its JSON text, the hash "unchanged" compares, and the key of an item without one. */
import { hash } from 'node:crypto'

import { storableKey } from './safe-text.ts'

/** Hash of a payload's JSON text: stable, short, and what "unchanged" compares. */
export function payloadHash(text: string): string {
  return hash('sha1', text, 'base64url')
}

/** A payload as stored: its JSON text (a string is taken as the text already). */
export function payloadText(payload: unknown): string {
  return typeof payload === 'string' ? payload : JSON.stringify(payload)
}

/** The target key of an item skipped or rejected before it got one: `~legacy:<legacyId>`. */
export function placeholderKey(legacyId: string): string {
  return `~legacy:${storableKey(legacyId)}`
}

/**
 * The sort key the ledger writes for an item: for a message its payload's `sentAt` (epoch seconds)
 * whenever the payload holds a usable one, whatever the caller says, so the packer can read a
 * message's time from its key (batch-ledger.ts: only messages keyed before the retention cut have
 * their payload read); else `given`, or 0.
 */
export function ledgerSortKey(entity: string, payload: unknown, given: number | undefined): number {
  const sentAt = entity === 'messages' && typeof payload === 'object' && payload !== null ? (payload as { sentAt?: unknown }).sentAt : undefined
  if (typeof sentAt === 'number' && Number.isSafeInteger(Math.trunc(sentAt))) {
    return Math.trunc(sentAt)
  }
  return Math.trunc(given ?? 0)
}
