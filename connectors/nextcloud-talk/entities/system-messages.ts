/**
 * Talk's system messages: a comment of verb `system` whose `message` is JSON
 * `{"message": "<kind>", "parameters": {…}}`. The kind becomes `systemKind`, the parameters
 * `metadata.parameters`, and the text an English sentence (Talk renders them in the client; these
 * are the common kinds, the rest read `<kind>`). Kinds Talk only uses to update other messages
 * (an edit, a deletion, a reaction) are marked `metadata.hidden`, as the Talk clients hide them.
 */
import type { JsonObject } from '../../../src/model/records.ts'
import { FieldProblem } from '../../sql/decode.ts'
import { jsonObject } from './decode-helpers.ts'

/** Kinds the Talk clients never show: they announce a change to another message. */
export const HIDDEN_KINDS = new Set([
  'message_deleted',
  'message_edited',
  'reaction',
  'reaction_deleted',
  'reaction_revoked',
  'history_cleared',
  'poll_voted',
  'thread_created',
])

const SENTENCES: Readonly<Record<string, (p: JsonObject, actor: string) => string>> = {
  conversation_created: (_, a) => `${a} created the conversation`,
  conversation_renamed: (p, a) => `${a} renamed the conversation to "${String(p.newName ?? '')}"`,
  description_set: (p, a) => `${a} set the description to "${String(p.newDescription ?? '')}"`,
  description_removed: (_, a) => `${a} removed the description`,
  user_added: (p, a) => `${a} added ${String(p.user ?? '')}`,
  user_removed: (p, a) => `${a} removed ${String(p.user ?? '')}`,
  moderator_promoted: (p, a) => `${a} promoted ${String(p.user ?? '')} to moderator`,
  moderator_demoted: (p, a) => `${a} demoted ${String(p.user ?? '')} from moderator`,
  group_added: (p, a) => `${a} added group ${String(p.group ?? '')}`,
  call_started: (_, a) => `${a} started a call`,
  call_joined: (_, a) => `${a} joined the call`,
  call_left: (_, a) => `${a} left the call`,
  call_ended: (_, a) => `Call with ${a} ended`,
  call_missed: (_, a) => `${a} missed a call`,
  read_only: (_, a) => `${a} locked the conversation`,
  read_only_off: (_, a) => `${a} unlocked the conversation`,
  listable_none: (_, a) => `${a} limited the conversation to participants`,
  guests_allowed: (_, a) => `${a} allowed guests`,
  guests_disallowed: (_, a) => `${a} disallowed guests`,
  password_set: (_, a) => `${a} set a password`,
  password_removed: (_, a) => `${a} removed the password`,
  message_deleted: (_, a) => `${a} deleted a message`,
  message_edited: (_, a) => `${a} edited a message`,
  history_cleared: (_, a) => `${a} cleared the history of the conversation`,
}

export interface SystemMessage {
  readonly kind: string
  readonly parameters: JsonObject
  readonly text: string
  readonly hidden: boolean
}

/** Decodes the JSON `message` of a system comment; `actor` names who did it (the actor id). */
export function decodeSystemMessage(message: unknown, actor: string, lossy: boolean): SystemMessage {
  const json = jsonObject('message', message, lossy)
  const kind = json?.message
  if (typeof kind !== 'string' || kind === '') {
    throw new FieldProblem('message', 'system message without a "message" kind')
  }
  const p = json?.parameters
  const parameters = typeof p === 'object' && p !== null && !Array.isArray(p) ? (p as JsonObject) : {}
  const sentence = SENTENCES[kind]
  return { kind, parameters, text: sentence ? sentence(parameters, actor) : kind, hidden: HIDDEN_KINDS.has(kind) }
}
