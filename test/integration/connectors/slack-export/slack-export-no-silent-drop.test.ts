/**
 * No silent drop, for the Slack export connector: every field the grounded export (test/fixtures/
 * slack-export/grounded.ts, shaped like genuine exports) holds has a declared fate here, and the
 * fate is checked — a `carried` field's value is in what the connector reads (the canonical
 * records), every other field (used to derive something, counted in metadata, or not carried) is
 * named in the connector README. A field added to the fixture without a fate fails; so does a fate
 * the README does not state.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../../connectors/index.ts'
import type { SourceSession } from '../../../../src/model/connector.ts'
import type { LegacyEntity } from '../../../../src/model/records.ts'
import { groundedFiles, type GroundedFixture, writeGroundedSlack } from '../../../fixtures/slack-export/grounded.ts'

type Fate = 'carried' | 'readme'

/** Each field path (arrays as `[]`) of each file kind → its fate. `readme`: the README names the last part in backticks. */
const FATES: Record<'users' | 'channels' | 'messages' | 'integration_logs', Record<string, Fate>> = {
  users: {
    id: 'carried',
    team_id: 'carried',
    name: 'carried',
    real_name: 'readme',
    updated: 'readme',
    'profile.real_name': 'carried',
    'profile.display_name': 'carried',
    'profile.email': 'carried',
    'profile.image_72': 'carried',
  },
  channels: {
    id: 'carried',
    name: 'carried',
    created: 'readme',
    creator: 'carried',
    is_archived: 'readme',
    is_general: 'readme',
    'members[]': 'carried',
    'topic.value': 'carried',
    'topic.creator': 'readme',
    'topic.last_set': 'readme',
    'purpose.value': 'carried',
    'purpose.creator': 'readme',
    'purpose.last_set': 'readme',
  },
  messages: {
    type: 'readme',
    subtype: 'readme',
    user: 'carried',
    bot_id: 'carried',
    bot_link: 'readme',
    text: 'readme',
    ts: 'carried',
    app_id: 'readme',
    username: 'carried',
    'bot_profile.id': 'carried',
    'bot_profile.app_id': 'carried',
    'bot_profile.name': 'carried',
    'bot_profile.deleted': 'readme',
    'bot_profile.team_id': 'readme',
    'attachments[].fallback': 'readme',
    'attachments[].pretext': 'carried',
    'attachments[].title': 'carried',
    'attachments[].title_link': 'carried',
    'attachments[].text': 'readme',
    'attachments[].fields[].title': 'carried',
    'attachments[].fields[].value': 'carried',
    'attachments[].fields[].short': 'readme',
    'attachments[].footer': 'readme',
    'attachments[].color': 'readme',
    'blocks[].type': 'readme',
    'blocks[].block_id': 'readme',
    'blocks[].elements[].type': 'readme',
    'blocks[].elements[].elements[].type': 'readme',
    'blocks[].elements[].elements[].text': 'readme',
    'blocks[].rows[][].type': 'readme',
    'blocks[].rows[][].text': 'carried',
    'blocks[].rows[][].elements[].type': 'readme',
    'blocks[].rows[][].elements[].elements[].type': 'readme',
    'blocks[].rows[][].elements[].elements[].text': 'carried',
    'files[].id': 'readme',
    'files[].created': 'readme',
    'files[].timestamp': 'readme',
    'files[].name': 'carried',
    'files[].title': 'readme',
    'files[].mimetype': 'carried',
    'files[].filetype': 'carried',
    'files[].user': 'readme',
    'files[].mode': 'readme',
    'files[].size': 'carried',
    'files[].url_private': 'readme',
    'files[].url_private_download': 'readme',
    'files[].thumb_64': 'readme',
    'files[].thumb_80': 'readme',
    'files[].thumb_360': 'readme',
    'files[].thumb_480': 'readme',
    'files[].thumb_720': 'readme',
    'files[].thumb_1024': 'readme',
    'files[].thumb_video': 'readme',
    'files[].thumb_pdf': 'readme',
    'files[].mp4': 'readme',
    'files[].hls': 'readme',
    'files[].vtt': 'readme',
    'files[].deanimate': 'readme',
    'files[].permalink': 'readme',
    'files[].permalink_public': 'readme',
    'files[].is_public': 'readme',
  },
  integration_logs: {
    user_id: 'readme',
    user_name: 'readme',
    date: 'readme',
    change_type: 'readme',
    app_type: 'carried',
    app_id: 'carried',
    service_id: 'readme',
    service_type: 'readme',
    scope: 'readme',
  },
}

/** Every leaf of `v`: its path (arrays as `[]`) and value. */
function* leaves(v: unknown, path = ''): Generator<[string, unknown]> {
  if (Array.isArray(v)) {
    for (const x of v) {
      yield* leaves(x, `${path}[]`)
    }
  } else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      yield* leaves(x, path === '' ? k : `${path}.${k}`)
    }
  } else {
    yield [path, v]
  }
}

function kindOf(file: string): keyof typeof FATES | undefined {
  if (file === 'users.json') {
    return 'users'
  }
  if (file === 'channels.json') {
    return 'channels'
  }
  if (file === 'integration_logs.json') {
    return 'integration_logs'
  }
  return /\/\d{4}-\d{2}-\d{2}\.json$/.test(file) ? 'messages' : undefined
}

const README = readFileSync(join(import.meta.dirname, '../../../../connectors/slack-export/README.md'), 'utf8')

describe('slack-export: no field of a genuine-shaped export is dropped without a word', () => {
  let fx: GroundedFixture
  let session: SourceSession
  let read: string
  beforeAll(async () => {
    fx = await writeGroundedSlack('folder')
    session = await createConnector(SourceConfigSchema.parse({ connector: 'slack-export', path: fx.path })).open()
    const all: unknown[] = []
    for (const e of ['users', 'groups', 'members', 'messages'] as LegacyEntity[]) {
      for await (const page of session.read(e)) {
        all.push(...page.rows)
      }
    }
    read = JSON.stringify(all)
  })
  afterAll(async () => {
    await session?.close()
    await fx?.drop()
  })

  it('every field has a fate; carried values are read, every other field is named in the README', () => {
    const missing: string[] = []
    const notCarried: string[] = []
    const undocumented: string[] = []
    for (const [file, text] of groundedFiles()) {
      const kind = kindOf(file)
      expect(kind, file).toBeDefined()
      for (const [path, value] of leaves(JSON.parse(text))) {
        const p = path.replace(/^\[\]\.?/, '')
        const fate = FATES[kind as keyof typeof FATES][p]
        const leaf = p.split('.').pop()?.replace(/\[\]/g, '') as string
        if (fate === undefined) {
          missing.push(`${kind} ${p}`)
        } else if (fate === 'carried' && !read.includes(JSON.stringify(value).replace(/^"|"$/g, '').split('?')[0] as string)) {
          notCarried.push(`${kind} ${p} = ${JSON.stringify(value)}`)
        } else if (fate === 'readme' && !README.includes(`\`${leaf}`)) {
          undocumented.push(`${kind} ${p}`)
        }
      }
    }
    expect([...new Set(missing)], 'fields without a declared fate').toEqual([])
    expect([...new Set(notCarried)], 'carried fields whose value is not read').toEqual([])
    expect([...new Set(undocumented)], 'fields the README does not name').toEqual([])
  })
})
