/**
 * Mattermost channels (except direct ones) → `LegacyGroup`: `O` public, `P` private, `G` (group
 * DM) private. Team channels are named by the configured rule (plus ` (team)` when channels of
 * other teams share the display name and the rule names no team); archived channels (`deleteat > 0`,
 * or a deleted team) get `archivedAt`.
 */
import type { JsonObject, LegacyGroup, LegacyGroupType } from '../../../src/model/records.ts'
import { compact, decodeId, decodeOptionalId, decodeOptionalText, FieldProblem } from '../../sql/decode.ts'
import { mmTime } from './decode-helpers.ts'

export interface GroupDecodeContext {
  readonly lossy: boolean
  /** The naming rule, e.g. `{team}-{channel}`. */
  readonly groupName: string
  /**
   * Whether a channel whose display name channels of other teams share gets its team's display
   * name appended (` (Engineering)`) when the rule names no team: false when one team is read.
   */
  readonly teamSuffix: boolean
}

const TYPES: Readonly<Record<string, LegacyGroupType>> = { O: 'public', P: 'private', G: 'private' }

/** Fills a naming rule; separators left dangling by an empty placeholder are trimmed. */
export function renderGroupName(rule: string, values: Readonly<Record<string, string>>): string {
  return rule
    .replace(/\{([A-Za-z]+)\}/g, (_, key: string) => values[key] ?? '')
    .trim()
    .replace(/^[-_.:/ ]+|[-_.:/ ]+$/g, '')
}

export function decodeGroup(row: Record<string, unknown>, ctx: GroupDecodeContext): LegacyGroup {
  const { lossy } = ctx
  const id = decodeId('id', row.id, lossy)
  const channelType = String(row.channel_type ?? '')
  const type = TYPES[channelType]
  if (type === undefined) {
    throw new FieldProblem('type', `unknown channel type ${JSON.stringify(channelType)}`)
  }
  const channelName = decodeOptionalText('name', row.channel_name, lossy) ?? ''
  const displayName = decodeOptionalText('displayname', row.displayname, lossy)?.trim() || channelName
  if (displayName === '') {
    throw new FieldProblem('displayname', 'is null: the channel has neither a display name nor a name')
  }
  const team = decodeOptionalText('teams.name', row.team_name, lossy) ?? ''
  const teamDisplayName = decodeOptionalText('teams.displayname', row.team_displayname, lossy) ?? ''
  const rendered =
    channelType === 'G' ? displayName : renderGroupName(ctx.groupName, { team, teamDisplayName, channel: displayName, channelName }) || displayName
  const suffixed =
    ctx.teamSuffix && Number(row.name_in_other_teams ?? 0) > 0 && !/\{team(DisplayName)?\}/.test(ctx.groupName) && (teamDisplayName || team) !== ''
  const name = suffixed ? `${rendered} (${teamDisplayName || team})` : rendered
  const metadata = compact<JsonObject>({
    nameWithTeam: suffixed ? true : undefined,
    mattermostType: channelType,
    channelName: channelName || undefined,
    team: team || undefined,
    teamDisplayName: teamDisplayName || undefined,
    header: decodeOptionalText('header', row.header, lossy),
  })
  return compact<LegacyGroup>({
    id,
    name,
    type,
    ownerId: decodeOptionalId('creatorid', row.creatorid, lossy),
    description: decodeOptionalText('purpose', row.purpose, lossy),
    metadata,
    createdAt: mmTime('createat', row.createat),
    archivedAt: mmTime('deleteat', row.deleteat) ?? mmTime('teams.deleteat', row.team_deleteat),
    updatedAt: mmTime('updateat', row.updateat),
  })
}
