/**
 * Mattermost users → `LegacyUser`. Bots are users with a `bots` row; `deleteat > 0` marks a
 * deactivated user. The display name is "first last", else the nickname, else the username.
 */
import type { JsonObject, LegacyUser } from '../../../src/model/records.ts'
import { compact, decodeBoolean, decodeId, decodeJson, decodeOptionalText, FieldProblem } from '../../sql/decode.ts'
import { mmTime, roleList } from './decode-helpers.ts'

export interface UserDecodeContext {
  readonly lossy: boolean
  /** `<siteUrl>` without a trailing slash, for avatar URLs. */
  readonly siteUrl?: string | undefined
}

export function decodeUser(row: Record<string, unknown>, ctx: UserDecodeContext): LegacyUser {
  const { lossy } = ctx
  const id = decodeId('id', row.id, lossy)
  const username = decodeOptionalText('username', row.username, lossy)
  const first = decodeOptionalText('firstname', row.firstname, lossy)?.trim() ?? ''
  const last = decodeOptionalText('lastname', row.lastname, lossy)?.trim() ?? ''
  const nickname = decodeOptionalText('nickname', row.nickname, lossy)?.trim()
  const name = `${first} ${last}`.trim() || nickname || username?.trim()
  if (!name) {
    throw new FieldProblem('username', 'is null: no username, first/last name or nickname to name the user')
  }
  const isBot = decodeBoolean('is_bot', row.is_bot)
  const props = decodeJson('props', row.props, 'object', lossy)
  const roles = roleList(row.roles)
  const metadata = compact<JsonObject>({
    roles: roles.length > 0 ? roles : undefined,
    nickname: nickname || undefined,
    position: decodeOptionalText('position', row.user_position, lossy),
    authService: decodeOptionalText('authservice', row.authservice, lossy),
    locale: decodeOptionalText('locale', row.locale, lossy),
    guest: roles.includes('system_guest') ? true : undefined,
    botDescription: isBot ? decodeOptionalText('description', row.bot_description, lossy) : undefined,
    botOwnerId: isBot ? decodeOptionalText('ownerid', row.bot_owner, lossy) : undefined,
    props: props && Object.keys(props).length > 0 ? props : undefined,
  })
  return compact<LegacyUser>({
    id,
    name,
    username,
    email: decodeOptionalText('email', row.email, lossy),
    avatar: ctx.siteUrl ? `${ctx.siteUrl}/api/v4/users/${encodeURIComponent(id)}/image` : undefined,
    metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
    createdAt: mmTime('createat', row.createat),
    deactivatedAt: mmTime('deleteat', row.deleteat),
    isBot,
    updatedAt: mmTime('updateat', row.updateat),
  })
}
