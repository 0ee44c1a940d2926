/**
 * What a `rocketchat_room` document is to chatferry, from its type `t`:
 * - `c` (public channel), `p` (private group; discussions and team rooms are `c`/`p` too) → a group;
 * - `d` with more than two distinct users (`uids`) → a group DM (a private group);
 * - `d` with one or two users → a direct conversation: no group, its messages go user to user
 *   (one user: the self-DM Rocket.Chat creates for "message yourself");
 * - `l` (omnichannel/livechat) and `v` (VoIP) → not read: visitors are no users of the platform;
 * - anything else → a bad room (`unknown`), reported once, and its subscriptions and messages too.
 * A direct room without `uids` (rooms of old versions) is resolved through `usernames`.
 */
import { type Doc, FieldProblem, stringList } from './values.ts'

export type RoomKind =
  | { readonly kind: 'channel' }
  | { readonly kind: 'group-dm'; readonly uids: readonly string[] }
  | { readonly kind: 'direct'; readonly uids: readonly string[] }
  | { readonly kind: 'omnichannel' }
  | { readonly kind: 'unknown'; readonly field: string; readonly reason: string }

const CHANNEL: RoomKind = { kind: 'channel' }
const OMNICHANNEL: RoomKind = { kind: 'omnichannel' }

/** The distinct members of a direct room: `uids`, else `usernames` looked up in `users.bson`. */
function directMembers(room: Doc, idOfUsername: (username: string) => string | undefined): string[] {
  const uids = stringList('uids', room.uids)
  if (uids.length > 0) {
    return [...new Set(uids)]
  }
  const usernames = stringList('usernames', room.usernames)
  if (usernames.length === 0) {
    throw new FieldProblem('uids', 'is missing: a direct room without uids or usernames has no known members')
  }
  return [
    ...new Set(
      usernames.map((name) => {
        const id = idOfUsername(name)
        if (id === undefined) {
          throw new FieldProblem('usernames', `direct room member ${JSON.stringify(name)} is no user of users.bson`)
        }
        return id
      }),
    ),
  ]
}

export function roomKind(room: Doc, idOfUsername: (username: string) => string | undefined): RoomKind {
  switch (room.t) {
    case 'c':
    case 'p':
      return CHANNEL
    case 'l':
    case 'v':
      return OMNICHANNEL
    case 'd': {
      try {
        const uids = directMembers(room, idOfUsername)
        return uids.length > 2 ? { kind: 'group-dm', uids } : { kind: 'direct', uids }
      } catch (err) {
        if (err instanceof FieldProblem) {
          return { kind: 'unknown', field: err.field, reason: err.message }
        }
        throw err
      }
    }
    default:
      return { kind: 'unknown', field: 't', reason: `unknown room type ${JSON.stringify(room.t ?? null)}` }
  }
}

/** Rooms read as groups: channels, group DMs, and bad rooms (each read once, as a problem). */
export const isGroupKind = (k: RoomKind) => k.kind === 'channel' || k.kind === 'group-dm' || k.kind === 'unknown'
