import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import type { WebhookReceiverRow } from './select-webhook-receiver.ts'

/** Records (or replaces) the job's receiver registration; the password is given only as its hash. */
export async function upsertWebhookReceiver(db: Kysely<StateDatabase>, jobId: string, row: WebhookReceiverRow): Promise<void> {
  await db
    .insertInto('chatferry.webhook_receivers')
    .values({ job_id: jobId, webhook_id: row.webhookId, url: row.url, username: row.username, password_hash: row.passwordHash })
    .onConflict((oc) =>
      oc.column('job_id').doUpdateSet({
        webhook_id: row.webhookId,
        url: row.url,
        username: row.username,
        password_hash: row.passwordHash,
        updated_at: sql`now()`,
      }),
    )
    .execute()
}
