/**
 * The chat interface's message writes (cometchat/docs `chat-apis.json`): `PUT /messages/{id}`
 * (update-message: `{data: {text, metadata}, tags}`) and `DELETE /messages/{id}` (delete-message:
 * `{permanent}`), both with an optional `onBehalfOf` header. Documented: only the sender may edit or
 * delete (`ERR_MESSAGE_NOT_A_SENDER`); action messages cannot be edited or deleted
 * (`ERR_MESSAGE_ACTION_NOT_ALLOWED`); a missing message is `ERR_MESSAGE_ID_NOT_FOUND`; without
 * `onBehalfOf` the app edits (`editedBy: "app_system"` in the example). Both answer an action
 * message (`category: action`, `type: message`, `data.action` `edited`/`deleted`, entities `by`,
 * `for`, `on` — `on` is the message after the call) and fire `message_edited` / `message_deleted`
 * with `{message: <that action>}` (documented example). Assumed: `text` and `metadata` replace
 * what the message had, other `data` keys stay; an edit or a soft delete of a soft-deleted message
 * is `ERR_MESSAGE_ACTION_NOT_ALLOWED`; a permanent delete removes the row (a later read answers
 * `ERR_MESSAGE_ID_NOT_FOUND`); the action messages are not stored; statuses 403/400.
 */
import { DeleteMessageRequest, MessageUpdate } from '../target/chat-write-schemas.ts'
import { LIMITS, type MessageData } from '../target/schemas.ts'
import { activeUser, existingMessage, type MessageRow } from './chat-lookups.ts'
import { type ChatWrite, type ChatWriteSpec, onBehalfOfHeader, writeBody } from './chat-write-route.ts'
import { HttpError, type RequestContext } from './http-kit.ts'
import { APP_SYSTEM } from './member-add-route.ts'
import { entityWrapper, groupObject, listedMessageObject, userObject } from './representations.ts'
import type { SandboxServices } from './sandbox-services.ts'
import { toJson } from './sandbox-store.ts'

/** Ids of the (unstored) action messages: far above any stored message's id, so never mistaken for one. */
let nextActionId = 1_000_000_000_000_000

/** The message, and who acts: the sender through `onBehalfOf`, or the app. */
async function actedOn(services: SandboxServices, ctx: RequestContext, w: ChatWrite): Promise<{ row: MessageRow; by: string }> {
  const row = await existingMessage(services.db, w.app.id, ctx.params.id ?? '')
  const by = onBehalfOfHeader(ctx)
  if (by !== undefined) {
    await activeUser(services.db, w.app.id, by)
    if (by !== row.sender) {
      throw new HttpError(403, 'ERR_MESSAGE_NOT_A_SENDER', `Only the sender (${row.sender}) can edit or delete the message ${row.id}.`)
    }
  }
  if (row.category === 'action') {
    throw new HttpError(400, 'ERR_MESSAGE_ACTION_NOT_ALLOWED', `The action message ${row.id} cannot be edited or deleted.`)
  }
  if (row.deleted_at !== null) {
    throw new HttpError(400, 'ERR_MESSAGE_ACTION_NOT_ALLOWED', `The message ${row.id} is deleted.`)
  }
  return { row, by: by ?? APP_SYSTEM.uid }
}

/** The action message the platform answers and sends to webhooks. */
async function actionMessage(services: SandboxServices, w: ChatWrite, row: MessageRow, by: string, action: 'edited' | 'deleted') {
  const uids = [...new Set([row.sender, by, ...(row.receiver_type === 'user' ? [row.receiver] : [])])]
  const users = await services.db.selectFrom('users').selectAll().where('app_id', '=', w.app.id).where('uid', 'in', uids).execute()
  const userOf = new Map(users.map((u) => [u.uid, u]))
  const group =
    row.receiver_type === 'group'
      ? await services.db.selectFrom('groups').selectAll().where('app_id', '=', w.app.id).where('guid', '=', row.receiver).executeTakeFirst()
      : undefined
  const receiver = row.receiver_type === 'group' ? group : userOf.get(row.receiver)
  const on = listedMessageObject(row, { sender: userOf.get(row.sender), receiver })
  const byUser = userOf.get(by)
  const forEntity =
    row.receiver_type === 'group'
      ? entityWrapper(group ? groupObject(group) : { guid: row.receiver }, 'group')
      : entityWrapper(receiver ? userObject(receiver as (typeof users)[number]) : { uid: row.receiver }, 'user')
  return {
    id: String(nextActionId++),
    conversationId: row.conversation_id,
    sender: by,
    receiverType: row.receiver_type,
    receiver: row.receiver,
    category: 'action',
    type: 'message',
    data: {
      action,
      entities: { by: entityWrapper(byUser ? userObject(byUser) : APP_SYSTEM, 'user'), for: forEntity, on: entityWrapper(on, 'message') },
    },
    sentAt: w.nowSeconds,
    updatedAt: w.nowSeconds,
  }
}

async function updateMessage(services: SandboxServices, ctx: RequestContext, w: ChatWrite) {
  const body = writeBody(ctx, MessageUpdate)
  const { row, by } = await actedOn(services, ctx, w)
  const data = { ...(row.data as MessageData) }
  if (body.data?.text !== undefined) {
    if (row.category === 'message' && row.type === 'text' && body.data.text.trim() === '') {
      throw new HttpError(400, 'ERR_EMPTY_MESSAGE_TEXT', 'A text message needs non-empty text.', { details: { 'data.text': ['must not be empty'] } })
    }
    data.text = body.data.text
  }
  if (body.data?.metadata !== undefined) {
    data.metadata = body.data.metadata
  }
  if (Buffer.byteLength(JSON.stringify(data), 'utf8') > LIMITS.MESSAGE_DATA_BYTES_MAX) {
    throw new HttpError(400, 'ERR_INVALID_MESSAGE_DATA', `The message data would be over ${LIMITS.MESSAGE_DATA_BYTES_MAX} bytes.`)
  }
  const updated = await services.db
    .updateTable('messages')
    .set({
      data: JSON.stringify(data),
      ...(body.tags !== undefined ? { tags: toJson(body.tags) } : {}),
      edited_at: w.nowSeconds,
      edited_by: by,
      updated_at: w.nowSeconds,
    })
    .where('app_id', '=', w.app.id)
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow()
  return acted(services, w, updated, by, 'edited')
}

async function acted(services: SandboxServices, w: ChatWrite, row: MessageRow, by: string, action: 'edited' | 'deleted') {
  const message = await actionMessage(services, w, row, by, action)
  w.items.push({ key: String(row.id), result: 'applied' })
  w.events.push({ trigger: action === 'edited' ? 'message_edited' : 'message_deleted', data: { message } })
  return { status: 200, body: { data: message } }
}

async function deleteMessage(services: SandboxServices, ctx: RequestContext, w: ChatWrite) {
  const { permanent } = writeBody(ctx, DeleteMessageRequest.partial(), true)
  const { row, by } = await actedOn(services, ctx, w)
  if (permanent === true) {
    await services.db.deleteFrom('messages').where('app_id', '=', w.app.id).where('id', '=', row.id).execute()
    return acted(services, w, { ...row, deleted_at: w.nowSeconds, deleted_by: by }, by, 'deleted')
  }
  const updated = await services.db
    .updateTable('messages')
    .set({ deleted_at: w.nowSeconds, deleted_by: by, updated_at: w.nowSeconds })
    .where('app_id', '=', w.app.id)
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow()
  return acted(services, w, updated, by, 'deleted')
}

export function messageWriteSpecs(services: SandboxServices): ChatWriteSpec[] {
  const keysOf = (ctx: RequestContext) => [ctx.params.id ?? '']
  return [
    { method: 'PUT', path: 'messages/:id', endpoint: 'messages.update', keysOf, handler: (ctx, w) => updateMessage(services, ctx, w) },
    { method: 'DELETE', path: 'messages/:id', endpoint: 'messages.delete', keysOf, handler: (ctx, w) => deleteMessage(services, ctx, w) },
  ]
}
