/**
 * Zulip users (`zerver_userprofile` of the realm, plus the system bots of the internal realm) →
 * `LegacyUser`. `is_active = false` is a deactivated user: `deactivatedAt` is the time of its latest
 * deactivation in the audit log, or its `date_joined` when the log has none. The name is
 * `full_name`, else the `email` (Zulip's visible address; `delivery_email` is the real one).
 */
import type { JsonObject, LegacyUser } from '../../../src/model/records.ts'
import { compact, decodeBoolean, decodeId, decodeOptionalId, decodeOptionalText, decodeTimestamp, FieldProblem } from '../../sql/decode.ts'

export interface UserDecodeContext {
  readonly lossy: boolean
  /** `<siteUrl>` without a trailing slash, for avatar URLs. */
  readonly siteUrl?: string | undefined
}

/** `UserProfile.role` values. */
export const ROLES: Readonly<Record<number, string>> = { 100: 'owner', 200: 'admin', 300: 'moderator', 400: 'member', 600: 'guest' }
/** `UserProfile.bot_type` values. */
export const BOT_TYPES: Readonly<Record<number, string>> = { 1: 'generic', 2: 'incoming-webhook', 3: 'outgoing-webhook', 4: 'embedded' }

export function decodeUser(row: Record<string, unknown>, ctx: UserDecodeContext): LegacyUser {
  const { lossy } = ctx
  const id = decodeId('id', row.id, lossy)
  const email = decodeOptionalText('email', row.email, lossy)
  const name = decodeOptionalText('full_name', row.full_name, lossy)?.trim() || email?.trim()
  if (!name) {
    throw new FieldProblem('full_name', 'is empty: the user has neither a full name nor an email to name it')
  }
  const joined = decodeTimestamp('date_joined', row.date_joined)
  const active = decodeBoolean('is_active', row.is_active, true)
  const isBot = decodeBoolean('is_bot', row.is_bot)
  const deactivatedAt = active ? undefined : (decodeTimestamp('realmauditlog.event_time', row.deactivated_at) ?? joined)
  const metadata = compact<JsonObject>({
    role: ROLES[Number(row.role)],
    botType: isBot ? BOT_TYPES[Number(row.bot_type)] : undefined,
    botOwnerId: isBot ? decodeOptionalId('bot_owner_id', row.bot_owner_id) : undefined,
    systemBot: decodeBoolean('cross_realm', row.cross_realm) || undefined,
    mirrorDummy: decodeBoolean('is_mirror_dummy', row.is_mirror_dummy) || undefined,
    timezone: decodeOptionalText('timezone', row.timezone, lossy),
    zulipEmail: email,
  })
  return compact<LegacyUser>({
    id,
    name,
    email: decodeOptionalText('delivery_email', row.delivery_email, lossy) ?? email,
    avatar: ctx.siteUrl ? `${ctx.siteUrl}/avatar/${id}` : undefined,
    metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
    createdAt: joined,
    deactivatedAt,
    isBot,
    updatedAt: decodeTimestamp('changed_at', row.changed_at),
  })
}
