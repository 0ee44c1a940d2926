/**
 * Nextcloud users (`oc_users`) → `LegacyUser`. The display name is `users.displayname`, else the
 * account's `displayname` (`oc_accounts.data`), else the uid; the e-mail is the account's, else the
 * `settings/email` preference (where Nextcloud keeps it). A user
 * disabled by an admin (`oc_preferences` core/enabled = 'false') is deactivated: Nextcloud keeps no
 * time for that, so `deactivatedAt` is the last login (login/lastLogin) or, for a user who never
 * logged in, the snapshot's time.
 */
import type { JsonObject, LegacyUser } from '../../../src/model/records.ts'
import { compact, decodeId, decodeOptionalText } from '../../sql/decode.ts'
import { jsonObject, unixSeconds } from './decode-helpers.ts'

export interface UserDecodeContext {
  readonly lossy: boolean
  /** `<siteUrl>` without a trailing slash, for avatar URLs. */
  readonly siteUrl?: string | undefined
  readonly snapshotAt: number
}

/** `{"displayname": {"value": "…"}}` → "…". */
function accountValue(account: JsonObject | undefined, key: string): string | undefined {
  const entry = account?.[key]
  const v = typeof entry === 'object' && entry !== null ? (entry as JsonObject).value : undefined
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined
}

export function decodeUser(row: Record<string, unknown>, ctx: UserDecodeContext): LegacyUser {
  const { lossy } = ctx
  const id = decodeId('uid', row.uid, lossy)
  const account = jsonObject('accounts.data', row.account, lossy)
  const name = decodeOptionalText('displayname', row.displayname, lossy)?.trim() || accountValue(account, 'displayname') || id
  const lastLogin = unixSeconds('preferences.lastLogin', row.last_login)
  const disabled = typeof row.enabled === 'string' && row.enabled.trim().toLowerCase() === 'false'
  const metadata = compact<JsonObject>({
    phone: accountValue(account, 'phone'),
    website: accountValue(account, 'website'),
    organisation: accountValue(account, 'organisation'),
    role: accountValue(account, 'role'),
  })
  return compact<LegacyUser>({
    id,
    name,
    username: id,
    // Nextcloud keeps the address in oc_preferences (settings/email, IUser::getSystemEMailAddress)
    // and mirrors it into the account data; the account's value is the one the user sees.
    email: accountValue(account, 'email') ?? (decodeOptionalText('preferences.email', row.pref_email, lossy)?.trim() || undefined),
    avatar: ctx.siteUrl ? `${ctx.siteUrl}/avatar/${encodeURIComponent(id)}/512` : undefined,
    metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
    lastActiveAt: lastLogin,
    deactivatedAt: disabled ? (lastLogin ?? ctx.snapshotAt) : undefined,
    isBot: false,
  })
}
