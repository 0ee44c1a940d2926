/**
 * What a session lists once when it opens: the Conversation Services (all of the account's, or
 * the configured ones), each service's conversations and each conversation's participants (Twilio
 * caps a conversation at 1,000 participants). Memory: one entry per conversation and participant,
 * never messages.
 */
import type { JsonObject } from '../../src/model/records.ts'
import type { TwilioClient } from './client.ts'
import { isObject, str } from './entities/fields.ts'

export interface Conversation {
  readonly serviceSid: string
  readonly value: JsonObject
  readonly participants: readonly JsonObject[]
}

/** Every item of a list resource, following `next_page_url`. */
export async function* listAll(client: TwilioClient, path: string, key: string, signal?: AbortSignal): AsyncGenerator<JsonObject> {
  let next: string | null = path
  while (next !== null) {
    const page = await client.page(next, key, signal)
    yield* page.items.filter(isObject)
    next = page.next
  }
}

export async function listServices(client: TwilioClient, configured: readonly string[] | undefined, pageSize: number): Promise<string[]> {
  if (configured !== undefined) {
    return [...configured]
  }
  const out: string[] = []
  for await (const s of listAll(client, `/v1/Services?PageSize=${pageSize}`, 'services')) {
    if (str(s.sid) !== undefined) {
      out.push(s.sid as string)
    }
  }
  return out
}

export async function listConversations(client: TwilioClient, services: readonly string[], pageSize: number): Promise<Conversation[]> {
  const out: Conversation[] = []
  for (const svc of services) {
    for await (const c of listAll(client, `/v1/Services/${svc}/Conversations?PageSize=${pageSize}`, 'conversations')) {
      const participants: JsonObject[] = []
      if (str(c.sid) !== undefined) {
        for await (const p of listAll(
          client,
          `/v1/Services/${svc}/Conversations/${c.sid as string}/Participants?PageSize=${pageSize}`,
          'participants',
        )) {
          participants.push(p)
        }
      }
      out.push({ serviceSid: svc, value: c, participants })
    }
  }
  return out
}
