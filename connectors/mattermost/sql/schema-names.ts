/**
 * Mattermost's table and column names per engine: lowercase on Postgres, CamelCase on MySQL/MariaDB
 * (where names are case-sensitive on Linux). Queries are written with the lowercase names and
 * translated here.
 */
import type { SqlEngine } from '../../sql/source-url.ts'

/** Lowercase name → MySQL CamelCase name, for every table and column chatferry reads. */
export const MYSQL_NAMES: Readonly<Record<string, string>> = {
  // tables
  users: 'Users',
  bots: 'Bots',
  teams: 'Teams',
  teammembers: 'TeamMembers',
  channels: 'Channels',
  channelmembers: 'ChannelMembers',
  channelmemberhistory: 'ChannelMemberHistory',
  posts: 'Posts',
  reactions: 'Reactions',
  fileinfo: 'FileInfo',
  // columns
  id: 'Id',
  createat: 'CreateAt',
  updateat: 'UpdateAt',
  deleteat: 'DeleteAt',
  editat: 'EditAt',
  username: 'Username',
  email: 'Email',
  nickname: 'Nickname',
  firstname: 'FirstName',
  lastname: 'LastName',
  position: 'Position',
  roles: 'Roles',
  authservice: 'AuthService',
  locale: 'Locale',
  props: 'Props',
  userid: 'UserId',
  description: 'Description',
  ownerid: 'OwnerId',
  name: 'Name',
  displayname: 'DisplayName',
  type: 'Type',
  teamid: 'TeamId',
  header: 'Header',
  purpose: 'Purpose',
  creatorid: 'CreatorId',
  channelid: 'ChannelId',
  schemeadmin: 'SchemeAdmin',
  schemeguest: 'SchemeGuest',
  lastupdateat: 'LastUpdateAt',
  jointime: 'JoinTime',
  leavetime: 'LeaveTime',
  rootid: 'RootId',
  originalid: 'OriginalId',
  message: 'Message',
  hashtags: 'Hashtags',
  fileids: 'FileIds',
  ispinned: 'IsPinned',
  postid: 'PostId',
  emojiname: 'EmojiName',
  path: 'Path',
  extension: 'Extension',
  size: 'Size',
  mimetype: 'MimeType',
}

/** The quoted name of a Mattermost table or column on this engine. */
export function mmIdentifier(engine: SqlEngine, lowercase: string, quote: (id: string) => string): string {
  if (engine !== 'mysql') {
    return quote(lowercase)
  }
  const camel = MYSQL_NAMES[lowercase]
  if (camel === undefined) {
    throw new Error(`no MySQL name for Mattermost identifier ${lowercase}`)
  }
  return quote(camel)
}
