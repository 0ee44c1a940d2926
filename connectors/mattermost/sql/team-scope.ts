/**
 * One team of a Mattermost database (`team:` in the settings; a fleet's tenant per team): the
 * conditions that keep each entity's rows to that team.
 * - The team's people: every user with a TeamMembers row of the team (a member who left included:
 *   their posts stay in its channels).
 * - Its channels: the team's open and private channels, and the group and direct channels whose
 *   members are all the team's people (a conversation across two teams belongs to neither).
 * - Users: the team's people, and anyone who is a member of, or posted in, one of its channels.
 * - Members and posts: those of its channels.
 * The team's name is checked by the settings schema (a-z, 0-9, - and _), so it is written into
 * the SQL as a literal.
 */
import type { LegacyEntity } from '../../../src/model/records.ts'
import type { Dialect } from '../../sql/dialect.ts'
import { mmSql } from './queries.ts'

/** The SQL conditions of one team, per entity, over the aliases the entity queries use. */
export interface TeamScope {
  /** Over `u` (users), `c` (channels), `m` (channel members), `p` (posts). */
  readonly where: { readonly [E in LegacyEntity]: string }
  /** How many teams have that name (0: the settings name a team the database does not have). */
  readonly teamCount: string
}

export function teamScope(d: Dialect, team: string): TeamScope {
  if (!/^[a-z0-9][a-z0-9_-]{0,62}[a-z0-9]$/.test(team)) {
    throw new Error(`not a Mattermost team name: ${JSON.stringify(team)}`)
  }
  const name = `'${team}'`
  const people = `SELECT tm.{userid} FROM {teammembers} tm JOIN {teams} tt ON tt.{id} = tm.{teamid} WHERE tt.{name} = ${name}`
  const channels = `SELECT ch.{id} FROM {channels} ch WHERE
    (ch.{type} IN ('O', 'P') AND ch.{teamid} IN (SELECT tt.{id} FROM {teams} tt WHERE tt.{name} = ${name}))
    OR (ch.{type} IN ('G', 'D')
        AND EXISTS (SELECT 1 FROM {channelmembers} cm WHERE cm.{channelid} = ch.{id})
        AND NOT EXISTS (SELECT 1 FROM {channelmembers} cm WHERE cm.{channelid} = ch.{id} AND cm.{userid} NOT IN (${people})))`
  return {
    where: {
      users: mmSql(
        d,
        `(u.{id} IN (${people})
          OR u.{id} IN (SELECT cm.{userid} FROM {channelmembers} cm WHERE cm.{channelid} IN (${channels}))
          OR u.{id} IN (SELECT pp.{userid} FROM {posts} pp WHERE pp.{channelid} IN (${channels})))`,
      ),
      groups: mmSql(d, `c.{id} IN (${channels})`),
      members: mmSql(d, `m.{channelid} IN (${channels})`),
      messages: mmSql(d, `p.{channelid} IN (${channels})`),
    },
    teamCount: mmSql(d, `SELECT count(*) AS n FROM {teams} tt WHERE tt.{name} = ${name}`),
  }
}
