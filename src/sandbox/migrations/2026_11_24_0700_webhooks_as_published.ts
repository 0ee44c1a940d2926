/**
 * Webhooks as the platform publishes them (facts i12 §4): each webhook records the implementation
 * it was created with (`version`: `legacy` without `X-Webhook-Version: 2`, else `2`),
 * `retry_on_failure` and `updated_at`; triggers move from the invented `triggers` column to a
 * sub-resource table. A webhook whose `triggers` was null received every trigger the sandbox then
 * knew; it keeps those 31. Deliveries record when each attempt started. Stored settings lose
 * `webhookMaxAttempts` (retries follow `retryOnFailure` now), and the old default timeout of
 * 5000 ms becomes the documented 2 s. Frozen in time: imports nothing from the application.
 */
import { type Kysely, sql } from 'kysely'

const OLD_TRIGGERS = [
  'message_sent',
  'message_edited',
  'message_deleted',
  'message_reaction_added',
  'message_reaction_removed',
  'user_blocked',
  'user_unblocked',
  'group_created',
  'group_updated',
  'group_deleted',
  'group_member_joined',
  'group_member_left',
  'group_member_added',
  'group_member_kicked',
  'group_member_banned',
  'group_member_unbanned',
  'group_member_scope_changed',
  'group_owner_transferred',
  'user_connection_status_changed',
  'message_delivery_receipt',
  'message_read_receipt',
  'call_initiated',
  'call_started',
  'call_participant_joined',
  'call_participant_left',
  'call_ended',
  'meeting_started',
  'meeting_participant_joined',
  'meeting_participant_left',
  'meeting_ended',
  'recording_generated',
]

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sandbox.webhooks
    add column version text not null default 'legacy',
    add column retry_on_failure boolean not null default false,
    add column updated_at bigint`.execute(db)
  await sql`update sandbox.webhooks set updated_at = created_at`.execute(db)
  await sql`alter table sandbox.webhooks alter column updated_at set not null`.execute(db)
  await sql`create table sandbox.webhook_triggers (
    app_id text not null,
    webhook_id text not null,
    trigger_id text not null,
    seq bigint generated always as identity,
    constraint webhook_triggers_pk primary key (app_id, webhook_id, trigger_id),
    constraint webhook_triggers_webhook_fk foreign key (app_id, webhook_id) references sandbox.webhooks (app_id, id) on delete cascade
  )`.execute(db)
  await sql`insert into sandbox.webhook_triggers (app_id, webhook_id, trigger_id)
    select w.app_id, w.id, t.trigger_id
    from sandbox.webhooks w
    cross join lateral (
      select jsonb_array_elements_text(coalesce(w.triggers, ${JSON.stringify(OLD_TRIGGERS)}::jsonb)) as trigger_id
    ) t
    order by w.seq
    on conflict do nothing`.execute(db)
  await sql`alter table sandbox.webhooks drop column triggers`.execute(db)
  await sql`alter table sandbox.webhook_deliveries add column attempts_at_ms jsonb`.execute(db)
  await sql`update sandbox.apps set settings = settings - 'webhookMaxAttempts'`.execute(db)
  await sql`update sandbox.apps set settings = jsonb_set(settings, '{webhookTimeoutMs}', '2000')
    where settings->>'webhookTimeoutMs' = '5000'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sandbox.webhooks add column triggers jsonb`.execute(db)
  await sql`update sandbox.webhooks w set triggers = (
    select jsonb_agg(t.trigger_id order by t.seq) from sandbox.webhook_triggers t where t.app_id = w.app_id and t.webhook_id = w.id
  )`.execute(db)
  await sql`drop table sandbox.webhook_triggers`.execute(db)
  await sql`alter table sandbox.webhooks drop column version, drop column retry_on_failure, drop column updated_at`.execute(db)
  await sql`alter table sandbox.webhook_deliveries drop column attempts_at_ms`.execute(db)
  await sql`update sandbox.apps set settings = settings - 'webhookRetryDelaysMs'`.execute(db)
}
