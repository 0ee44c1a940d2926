/**
 * No silent drop, for the Stream Chat connector: every field of the v1 fixture export (the objects
 * Stream's export and API return: channels, members, messages, attachments, reactions, embedded
 * users) has a declared fate here, and the fate is checked — a `carried` field's value is in what
 * the connector reads (the canonical records), a `time` field's instant is there in epoch ms, and
 * every other field is named in the connector README (in backticks). A field added to the fixture
 * without a fate fails; so does a fate the README does not state. The seed is read without its
 * planted bad rows (a rejected row's values go nowhere by design: the row is rejected with its
 * reason) and without its one-to-one channel (which the README says becomes no group).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../../connectors/index.ts'
import type { LegacyEntity } from '../../../../src/model/records.ts'
import { type StreamFixture, writeStreamFixture } from '../../../fixtures/stream-chat/generate.ts'
import { DM_AB, type StreamSeed, streamSeed } from '../../../fixtures/stream-chat/seed.ts'

const BAD_MESSAGES = new Set(['m-bad-time', 'm-bad-url', 'm-no-user', 'm-huge', 'd-3', 'x-1'])

/** The seed without its planted bad rows and its one-to-one channel. */
function cleanSeed(): StreamSeed {
  const seed = streamSeed()
  const bob = seed.users.find((u) => u.id === 'bob') as Record<string, unknown>
  return {
    ...seed,
    users: seed.users.filter((u) => u.id !== 'badtime'),
    staleUser: bob,
    channels: seed.channels
      .filter((c) => typeof c.channel.type === 'string' && c.channel.id !== DM_AB)
      .map((c) => {
        const seen = new Set<string>()
        return {
          ...c,
          members: c.members.filter((m) => typeof m.user_id === 'string' && m.user_id !== 'badtime' && !seen.has(m.user_id) && seen.add(m.user_id)),
          messages: c.messages.filter((m) => !BAD_MESSAGES.has(m.id as string)),
        }
      }),
  }
}

type Fate = 'carried' | 'time' | 'readme'

/** Field paths (arrays as `[]`, embedded users as `user.<field>`) → fate. */
const FATES: Record<string, Fate> = {
  'channel.id': 'carried',
  'channel.type': 'carried',
  'channel.cid': 'carried',
  'channel.created_at': 'time',
  'channel.updated_at': 'time',
  'channel.deleted_at': 'time',
  'channel.frozen': 'readme',
  'channel.disabled': 'readme',
  'channel.config.name': 'readme',
  'channel.config.reactions': 'readme',
  'channel.config.replies': 'readme',
  'channel.name': 'carried',
  'channel.image': 'carried',
  'channel.description': 'carried',
  'channel.topic': 'carried',
  'channel.team': 'carried',
  'channel.member_count': 'readme',
  'members[].user_id': 'carried',
  'members[].status': 'readme',
  'members[].created_at': 'time',
  'members[].updated_at': 'time',
  'members[].banned': 'readme',
  'members[].role': 'readme',
  'members[].channel_role': 'readme',
  'members[].is_moderator': 'readme',
  'messages[].id': 'carried',
  'messages[].text': 'carried',
  'messages[].html': 'readme',
  'messages[].type': 'readme',
  'messages[].cid': 'carried',
  'messages[].created_at': 'time',
  'messages[].updated_at': 'time',
  'messages[].deleted_at': 'time',
  'messages[].message_text_updated_at': 'time',
  'messages[].pinned': 'readme',
  'messages[].pinned_at': 'time',
  'messages[].silent': 'readme',
  'messages[].parent_id': 'carried',
  'messages[].show_in_channel': 'readme',
  'messages[].quoted_message_id': 'carried',
  'messages[].priority': 'carried',
  'messages[].attachments[].type': 'readme',
  'messages[].attachments[].image_url': 'carried',
  'messages[].attachments[].asset_url': 'carried',
  'messages[].attachments[].mime_type': 'carried',
  'messages[].attachments[].file_size': 'carried',
  'messages[].attachments[].fallback': 'carried',
  'messages[].attachments[].title': 'carried',
  'messages[].attachments[].title_link': 'carried',
  'messages[].attachments[].og_scrape_url': 'carried',
  'messages[].latest_reactions[].type': 'carried',
  'messages[].latest_reactions[].user_id': 'carried',
  'messages[].latest_reactions[].created_at': 'time',
  'messages[].latest_reactions[].message_id': 'carried',
  'messages[].reaction_counts.like': 'readme',
  'messages[].reaction_counts.love': 'readme',
  'messages[].reaction_counts.haha': 'readme',
  'user.id': 'carried',
  'user.name': 'carried',
  'user.image': 'carried',
  'user.role': 'carried',
  'user.created_at': 'time',
  'user.updated_at': 'time',
  'user.deactivated_at': 'time',
  'user.banned': 'readme',
  'user.online': 'readme',
  'user.teams[]': 'carried',
  'user.language': 'carried',
  'user.favourite_color': 'carried',
}

const USER_AT = /^(?:channel\.created_by|messages\[\]\.(?:user|pinned_by|mentioned_users\[\]|latest_reactions\[\]\.user)|members\[\]\.user)(?=\.|$)/

function* leaves(v: unknown, path = ''): Generator<[string, unknown]> {
  if (Array.isArray(v)) {
    for (const x of v) {
      yield* leaves(x, `${path}[]`)
    }
  } else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      yield* leaves(x, path === '' ? k : `${path}.${k}`)
    }
  } else if (v !== null) {
    yield [path, v]
  }
}

const README = readFileSync(join(import.meta.dirname, '../../../../connectors/stream-chat/README.md'), 'utf8')

describe('stream-chat: no field of the export is dropped without a word', () => {
  let fx: StreamFixture
  let read: string
  beforeAll(async () => {
    fx = writeStreamFixture('json', { seed: cleanSeed() })
    const s = await createConnector(
      SourceConfigSchema.parse({ connector: 'stream-chat', path: fx.path, maxElementBytes: fx.seed.maxElementBytes }),
    ).open()
    const all: unknown[] = []
    try {
      for (const e of ['users', 'groups', 'members', 'messages'] as LegacyEntity[]) {
        for await (const page of s.read(e)) {
          all.push(...page.rows)
        }
      }
    } finally {
      await s.close()
    }
    read = JSON.stringify(all)
  })
  afterAll(() => fx?.drop())

  it('every field has a fate; carried values and times are read, every other field is named in the README', () => {
    const missing = new Set<string>()
    const notCarried = new Set<string>()
    const undocumented = new Set<string>()
    const exports = JSON.parse(readFileSync(fx.path, 'utf8')) as unknown[]
    for (const [raw, value] of leaves(exports)) {
      const path = raw.replace(/^\[\]\./, '').replace(USER_AT, 'user')
      const fate = FATES[path]
      const leaf = (path.split('.').pop() as string).replace(/\[\]/g, '')
      if (fate === undefined) {
        missing.add(path)
      } else if (fate === 'carried' && !read.includes(JSON.stringify(String(value)).slice(1, -1))) {
        notCarried.add(`${path} = ${JSON.stringify(value)}`)
      } else if (
        fate === 'time' &&
        !Number.isNaN(Date.parse(String(value))) &&
        !read.includes(String(Date.parse(String(value).replace(/(\.\d{3})\d+/, '$1'))))
      ) {
        notCarried.add(`${path} = ${JSON.stringify(value)}`)
      } else if (fate === 'readme' && !README.includes(`\`${leaf}`) && !README.includes(`\`${path.split('.')[1] ?? ''}`)) {
        undocumented.add(path)
      }
    }
    expect([...missing], 'fields without a declared fate').toEqual([])
    expect([...notCarried], 'carried fields whose value is not read').toEqual([])
    expect([...undocumented], 'fields the README does not name').toEqual([])
  })
})
