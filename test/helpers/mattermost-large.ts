/**
 * The hand-made Mattermost fixture grown to a few thousand posts, deterministically, so a run takes
 * a few seconds (for crash/resume tests) while every row is still known to the test: the
 * expectation is derived from the returned seed with `expectedMattermost`, like the small fixture.
 * Extra rows: `extraUsers` users in Town Square, and `posts` posts spread over the fixture's
 * channels, DMs and group DM, with ties in `createat`, thread replies, edits (with their history
 * copies), soft deletes, system posts, mentions, reactions and files.
 */
import { type MattermostEngine, type MattermostSeed, mattermostSeed, MINUTE, MM, type Row, T0 } from '../fixtures/mattermost/load.ts'

export interface LargeSeedOptions {
  readonly posts: number
  /** @default 40 */
  readonly extraUsers?: number
}

export function largeMattermostSeed(engine: MattermostEngine, options: LargeSeedOptions): MattermostSeed {
  const seed = mattermostSeed(engine)
  const baseUser = seed.users?.find((u) => u.id === MM.bob) as Row
  const basePost = seed.posts?.find((p) => p.id === 'p03tie') as Row
  const baseMember = seed.channelmembers?.find((m) => m.channelid === MM.town && m.userid === MM.bob) as Row
  const n = options.extraUsers ?? 40
  const users: Row[] = []
  const members: Row[] = []
  for (let i = 0; i < n; i++) {
    const id = `x${String(i).padStart(4, '0')}user`
    users.push({ ...baseUser, id, username: `xuser${i}`, email: `xuser${i}@example.com`, nickname: '', firstname: `Extra`, lastname: `User ${i}` })
    members.push({ ...baseMember, channelid: MM.town, userid: id })
  }
  // Two legacy ids that want the same platform id: `XUpper01` normalises to `xupper01_n8jusl22b`,
  // which the second user has verbatim. Whichever comes first keeps it (both collations order
  // `XUpper01` first); the other is re-keyed, and every later reference must follow the id map.
  users.push({ ...baseUser, id: 'XUpper01', username: 'upper', email: 'upper@example.com', nickname: '', firstname: 'Upper', lastname: 'Case' })
  users.push({
    ...baseUser,
    id: 'xupper01_n8jusl22b',
    username: 'clash',
    email: 'clash@example.com',
    nickname: '',
    firstname: 'Clash',
    lastname: 'Id',
  })
  const townPeople = [MM.alice, MM.bob, MM.carol, MM.eve, ...users.map((u) => u.id as string)]
  const posts: Row[] = []
  const reactions: Row[] = []
  const fileinfo: Row[] = []
  const roots = new Map<string, string[]>()
  const start = T0 + 200 * MINUTE
  for (let i = 0; i < options.posts; i++) {
    const id = `q${String(i).padStart(6, '0')}`
    // Three posts per millisecond tick, one tick per second.
    const createat = start + Math.floor(i / 3) * 1000
    const slot = i % 10
    let channelid: string = MM.town
    let userid = townPeople[(i * 7) % townPeople.length] as string
    if (slot === 3) {
      channelid = MM.dmAliceBob
      userid = i % 20 === 3 ? MM.alice : MM.bob
    } else if (slot === 5) {
      channelid = MM.gm
      userid = [MM.alice, MM.bob, MM.carol][i % 3] as string
    } else if (slot === 7) {
      channelid = MM.secret
      userid = i % 2 ? MM.alice : MM.bob
    } else if (slot === 9) {
      // An archived channel, and the bot: skipped as dependencies when a policy skips them.
      channelid = MM.archived
      userid = i % 20 === 9 ? MM.botty : MM.bob
    } else if (i % 97 === 8) {
      channelid = MM.dmSelf
      userid = MM.carol
    }
    const inChannel = roots.get(channelid) ?? []
    let rootid = ''
    let message = `message ${i} about the release`
    let type = ''
    let editat = 0
    let deleteat = 0
    let updateat = createat
    if (i % 7 === 6 && inChannel.length > 0) {
      rootid = inChannel[(i * 13) % inChannel.length] as string
    }
    if (i % 9 === 4) {
      message += ` cc @xuser${i % n} and @alice`
    }
    if (i % 23 === 22) {
      message += ' ping @upper and @clash'
    }
    // Now and then a text over the platform's 10 KB: split into parts.
    if (i % 500 === 250) {
      message += ` ${'lorem ipsum dolor sit amet '.repeat(900)}`
    }
    if (i % 31 === 30) {
      type = 'system_join_channel'
      message = `someone joined the channel.`
    }
    if (i % 11 === 10) {
      editat = createat + 5 * MINUTE
      updateat = editat
      posts.push({
        ...basePost,
        id: `h${String(i).padStart(6, '0')}`,
        createat,
        updateat: editat,
        deleteat: editat,
        userid,
        channelid,
        rootid,
        originalid: id,
        message: `${message} (draft)`,
      })
      message += ' (edited)'
    }
    if (i % 37 === 36) {
      deleteat = createat + 10 * MINUTE
      updateat = deleteat
    }
    let fileids = '[]'
    if (i % 53 === 52) {
      const fid = `fq${String(i).padStart(6, '0')}`
      fileids = JSON.stringify([fid])
      fileinfo.push({
        id: fid,
        creatorid: userid,
        postid: id,
        createat,
        updateat: createat,
        deleteat: 0,
        path: `2024/${fid}/shot ${i}.png`,
        name: `shot ${i}.png`,
        extension: 'png',
        size: 1000 + i,
        mimetype: 'image/png',
      })
    }
    if (i % 13 === 12) {
      reactions.push({ postid: id, userid: MM.carol, emojiname: 'tada', createat: createat + MINUTE, updateat: createat + MINUTE, deleteat: 0 })
      updateat = Math.max(updateat, createat + MINUTE)
    }
    posts.push({
      ...basePost,
      id,
      createat,
      updateat,
      editat,
      deleteat,
      userid,
      channelid,
      rootid,
      originalid: '',
      message,
      type,
      fileids,
      hasreactions: i % 13 === 12,
    })
    if (rootid === '' && type === '') {
      inChannel.push(id)
      roots.set(channelid, inChannel)
    }
  }
  return {
    ...seed,
    users: [...(seed.users ?? []), ...users],
    channelmembers: [...(seed.channelmembers ?? []), ...members],
    posts: [...(seed.posts ?? []), ...posts],
    reactions: [...(seed.reactions ?? []), ...reactions],
    fileinfo: [...(seed.fileinfo ?? []), ...fileinfo],
  }
}
