import type { Kysely } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** The job's registered receiver: its webhook, URL, Basic-auth username and password hash. */
export interface WebhookReceiverRow {
  readonly webhookId: string
  readonly url: string
  readonly username: string
  readonly passwordHash: string
}

/** The job's receiver registration (`chatferry.webhook_receivers`), if any. */
export async function selectWebhookReceiver(db: Kysely<StateDatabase>, jobId: string): Promise<WebhookReceiverRow | undefined> {
  const row = await db
    .selectFrom('chatferry.webhook_receivers')
    .select(['webhook_id', 'url', 'username', 'password_hash'])
    .where('job_id', '=', jobId)
    .executeTakeFirst()
  return row === undefined ? undefined : { webhookId: row.webhook_id, url: row.url, username: row.username, passwordHash: row.password_hash }
}
