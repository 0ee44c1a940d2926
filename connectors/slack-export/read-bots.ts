/**
 * Integration bots as users. An integration's posts name a bot id (`bot_id: "B…"`) that is not in
 * `users.json`; its name is in the export elsewhere, found by one pass over the day files (folders
 * and days in order) and `integration_logs.json`, taken in this order of preference:
 * 1. `bot_profile.name` of a `bot_message` (apps);
 * 2. the label of a `bot_add`/`bot_remove` message's `bot_link` (`<https://…/services/B…|Jenkins CI>`);
 * 3. `integration_logs.json`'s `app_type` for the `app_id` the bot's messages or profile name;
 * 4. the `username` a `bot_message` was posted as (webhooks may change it per post: the first is taken).
 * A bot id that is a user's `profile.bot_id` is that user. A bot id named nowhere is not a user here (the `missingUsers` policy makes its placeholder).
 * Position: `{b}` (the bot's place in the order first seen), after every user of the users file.
 */
import type { Cursor } from '../../src/model/connector.ts'
import type { LegacyUser } from '../../src/model/records.ts'
import type { ExportArchive } from '../archive/archive.ts'
import { arrayFileBatches } from '../archive/array-file.ts'
import { at, type PositionedRow } from '../rows/pages.ts'
import { isObject, str } from './entities/fields.ts'
import { unescapeSlack } from './entities/message-text.ts'
import { DAY_FILE, metadataElements } from './layout.ts'

const RANK = { bot_profile: 1, bot_link: 2, integration_logs: 3, username: 4 } as const
type NameSource = keyof typeof RANK

interface Bot {
  name?: string
  from?: NameSource
  appId?: string
}

/** The label of a `<url|label>` link, else undefined. */
function linkLabel(link: unknown): string | undefined {
  const m = typeof link === 'string' ? /^<[^|<>]+\|([^<>]+)>$/.exec(link) : null
  return m === null ? undefined : unescapeSlack(m[1] as string)
}

function offer(bot: Bot, name: string | undefined, from: NameSource) {
  if (name !== undefined && name.trim() !== '' && (bot.from === undefined || RANK[from] < RANK[bot.from])) {
    bot.name = name.trim()
    bot.from = from
  }
}

function see(bots: Map<string, Bot>, m: unknown) {
  if (!isObject(m)) {
    return
  }
  const id = str(m.bot_id)
  if (id === undefined || !/^B[A-Z0-9]+$/.test(id)) {
    return
  }
  const bot = bots.get(id) ?? {}
  bots.set(id, bot)
  const profile = isObject(m.bot_profile) ? m.bot_profile : undefined
  bot.appId ??= str(profile?.app_id) ?? str(m.app_id)
  offer(bot, str(profile?.name), 'bot_profile')
  if (m.subtype === 'bot_add' || m.subtype === 'bot_remove') {
    offer(bot, linkLabel(m.bot_link), 'bot_link')
  }
  if (m.subtype === 'bot_message') {
    offer(bot, unescapeSlack(str(m.username) ?? ''), 'username')
  }
}

/** `integration_logs.json`: app id → its name (`app_type`); the file is optional. */
async function appNames(archive: ExportArchive): Promise<Map<string, string>> {
  const names = new Map<string, string>()
  for await (const item of metadataElements(archive, 'integration_logs.json')) {
    if ('value' in item && isObject(item.value)) {
      const id = str(item.value.app_id)
      const name = str(item.value.app_type)
      if (id !== undefined && name !== undefined && !names.has(id)) {
        names.set(id, name)
      }
    }
  }
  return names
}

export async function* botRows(archive: ExportArchive, usersFile: string | undefined, after?: Cursor): AsyncGenerator<PositionedRow<LegacyUser>> {
  const users = new Set<string>()
  if (usersFile !== undefined) {
    for await (const item of metadataElements(archive, usersFile)) {
      // A bot user's own bot id (`profile.bot_id`) is that user: its posts name the user too.
      const u = 'value' in item && isObject(item.value) ? item.value : undefined
      for (const id of [str(u?.id), isObject(u?.profile) ? str(u.profile.bot_id) : undefined]) {
        if (id !== undefined) {
          users.add(id)
        }
      }
    }
  }
  const bots = new Map<string, Bot>()
  for (const folder of archive.folders()) {
    for (const day of archive.filesIn(folder).filter((f) => DAY_FILE.test(f))) {
      for await (const batch of arrayFileBatches(archive, `${folder}/${day}`, archive.limits.maxElementBytes)) {
        for (const item of batch) {
          if ('value' in item) {
            see(bots, item.value)
          }
        }
      }
    }
  }
  const apps = await appNames(archive)
  const skipTo = at(after, 'b')
  let b = -1
  for (const [id, bot] of bots) {
    if (bot.appId !== undefined) {
      offer(bot, apps.get(bot.appId), 'integration_logs')
    }
    if (users.has(id) || bot.name === undefined || bot.from === undefined) {
      continue
    }
    b++
    if (b <= skipTo) {
      continue
    }
    const metadata = { botId: id, nameFrom: bot.from, ...(bot.appId !== undefined ? { appId: bot.appId } : {}) }
    yield { pos: { b }, row: { ok: true, record: { id, name: bot.name, isBot: true, metadata } } }
  }
}
