/**
 * `users` documents → `LegacyUser`. The display name is `name`, else `username`. `type: 'bot'`
 * (e.g. `rocket.cat`), `type: 'app'` (Apps-Engine users) or the `bot` role make a bot. `active:
 * false` is a deactivated user; Rocket.Chat keeps no deactivation time, so `deactivatedAt` is the
 * document's `_updatedAt` (else its `createdAt`). The e-mail is the first verified address of
 * `emails[]`, else the first (`metadata.emailVerified` says which; the mappings' `userEmails`
 * policy decides whether it is carried). `services` (password hashes, login tokens) is
 * never read.
 */
import type { JsonObject, LegacyUser } from '../../../src/model/records.ts'
import { compact, type Doc, FieldProblem, optionalArray, optionalDoc, optionalText, optionalTime, requiredId, stringList } from './values.ts'

export interface UserDecodeContext {
  /** The Rocket.Chat site URL without a trailing slash, for avatar URLs. */
  readonly siteUrl?: string | undefined
}

const BOT_TYPES = new Set(['bot', 'app'])

/** The first verified address, else the first one, and whether Rocket.Chat verified it. */
function emailOf(user: Doc): { address?: string; verified?: boolean } {
  const emails = (optionalArray('emails', user.emails) ?? []).map((e, i) => optionalDoc(`emails.${i}`, e) ?? {})
  const pick = emails.find((e) => e.verified === true && typeof e.address === 'string') ?? emails.find((e) => typeof e.address === 'string')
  const address = pick === undefined ? undefined : optionalText('emails.address', pick.address)?.trim()
  return address ? { address, verified: pick?.verified === true } : {}
}

export function decodeUser(user: Doc, ctx: UserDecodeContext): LegacyUser {
  const id = requiredId('_id', user._id)
  const username = optionalText('username', user.username)?.trim() || undefined
  const name = optionalText('name', user.name)?.trim() || username
  if (!name) {
    throw new FieldProblem('username', 'is missing: no username or name to name the user')
  }
  const type = optionalText('type', user.type)
  const roles = stringList('roles', user.roles)
  const isBot = (type !== undefined && BOT_TYPES.has(type)) || roles.includes('bot')
  const createdAt = optionalTime('createdAt', user.createdAt)
  const updatedAt = optionalTime('_updatedAt', user._updatedAt)
  const email = emailOf(user)
  const metadata = compact<JsonObject>({
    roles: roles.length > 0 ? roles : undefined,
    userType: type,
    guest: roles.includes('guest') ? true : undefined,
    nickname: optionalText('nickname', user.nickname)?.trim() || undefined,
    bio: optionalText('bio', user.bio)?.trim() || undefined,
    language: optionalText('language', user.language) || undefined,
    ldap: user.ldap === true ? true : undefined,
    emailVerified: email.verified,
  })
  return compact<LegacyUser>({
    id,
    name,
    username,
    email: email.address,
    avatar: ctx.siteUrl && username ? `${ctx.siteUrl}/avatar/${encodeURIComponent(username)}` : undefined,
    metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
    createdAt,
    lastActiveAt: optionalTime('lastLogin', user.lastLogin),
    deactivatedAt: user.active === false ? (updatedAt ?? createdAt) : undefined,
    isBot,
    updatedAt,
  })
}
