/**
 * No silent drop (issue 26): for each connector's fixtures, every field of a source row that holds
 * a value reaches its record's platform payload, or is counted (a policy outcome, the record's
 * rejection or skip), or is documented in the connector's README as not carried. The fates are
 * declared per column (test/fixtures/<system>/field-fates.ts); a column without one fails too.
 */
import { readFileSync } from 'node:fs'

import { afterAll, describe, expect, it } from 'vitest'

import { createMattermostConnector, MattermostConfigSchema } from '../../../connectors/mattermost/index.ts'
import { createNextcloudTalkConnector, NextcloudTalkConfigSchema } from '../../../connectors/nextcloud-talk/index.ts'
import { createRocketChatConnector, RocketChatConfigSchema } from '../../../connectors/rocketchat/index.ts'
import { createSendbirdConnector, SendbirdConfigSchema } from '../../../connectors/sendbird/index.ts'
import { createZulipConnector, ZulipConfigSchema } from '../../../connectors/zulip/index.ts'
import { mattermostFieldFates } from '../../fixtures/mattermost/field-fates.ts'
import { groundedMattermostSeed } from '../../fixtures/mattermost/grounded.ts'
import { loadMattermostFixture } from '../../fixtures/mattermost/load.ts'
import { mattermostSeed } from '../../fixtures/mattermost/seed.ts'
import { nextcloudFieldFates } from '../../fixtures/nextcloud-talk/field-fates.ts'
import { groundedNextcloudSeed } from '../../fixtures/nextcloud-talk/grounded.ts'
import { loadNextcloudFixture } from '../../fixtures/nextcloud-talk/load.ts'
import { writeRocketChatDump } from '../../fixtures/rocketchat/dump.ts'
import { rocketchatFieldFates, rocketchatRows } from '../../fixtures/rocketchat/field-fates.ts'
import { groundedRocketChatSeed } from '../../fixtures/rocketchat/grounded.ts'
import { sendbirdFieldFates, sendbirdRows } from '../../fixtures/sendbird/field-fates.ts'
import { writeSendbirdExports } from '../../fixtures/sendbird/generate.ts'
import { sendbirdSeed } from '../../fixtures/sendbird/seed.ts'
import { zulipFieldFates } from '../../fixtures/zulip/field-fates.ts'
import { groundedZulipSeed } from '../../fixtures/zulip/grounded.ts'
import { loadZulipFixture } from '../../fixtures/zulip/load.ts'
import { REALM, zulipSeed } from '../../fixtures/zulip/seed.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { fieldLosses } from '../../helpers/field-fates.ts'
import { dropWithin } from '../../helpers/loader-harness.ts'

const dbs: TestDatabase[] = []
afterAll(async () => {
  for (const db of dbs) {
    await dropWithin(db)
  }
})

const readme = (system: string) => readFileSync(new URL(`../../../connectors/${system}/README.md`, import.meta.url), 'utf8')
const POLICIES = { retention: { oldMessages: 'send' as const } }

describe('mattermost: no field of a source row is dropped silently', () => {
  it.each([
    { name: 'the grounded fixture', seed: groundedMattermostSeed() },
    { name: 'the hand-made fixture', seed: mattermostSeed('postgres') },
  ])('$name', async ({ seed }) => {
    const db = await createTestDatabase('cf_mm_drop')
    dbs.push(db)
    await loadMattermostFixture('postgres', db.url, { seed })
    const session = await createMattermostConnector(MattermostConfigSchema.parse({ connector: 'mattermost', url: db.url })).open()
    try {
      expect(await fieldLosses(session, seed, mattermostFieldFates(seed), readme('mattermost'), POLICIES)).toEqual([])
    } finally {
      await session.close()
    }
  })
})

describe('nextcloud-talk: no field of a source row is dropped silently', () => {
  it.each([{ name: 'the grounded fixture', seed: groundedNextcloudSeed() }])('$name', async ({ seed }) => {
    const db = await createTestDatabase('cf_nc_drop')
    dbs.push(db)
    await loadNextcloudFixture('postgres', db.url, { seed })
    const config = NextcloudTalkConfigSchema.parse({ connector: 'nextcloud-talk', url: db.url, siteUrl: 'https://cloud.example.com' })
    const session = await createNextcloudTalkConnector(config).open()
    try {
      expect(await fieldLosses(session, seed, nextcloudFieldFates(seed), readme('nextcloud-talk'), POLICIES)).toEqual([])
    } finally {
      await session.close()
    }
  })
})

describe('zulip: no field of a source row is dropped silently', () => {
  it.each([
    { name: 'the hand-made fixture (realm acme, default settings)', seed: zulipSeed(), realm: 'acme', realmId: REALM.acme },
    { name: 'the grounded fixture', seed: groundedZulipSeed(), realm: 'grounded', realmId: 7 },
  ])('$name', async ({ seed, realm, realmId }) => {
    const db = await createTestDatabase('cf_zu_drop')
    dbs.push(db)
    await loadZulipFixture(db.url, seed)
    const session = await createZulipConnector(ZulipConfigSchema.parse({ connector: 'zulip', url: db.url, realm })).open()
    try {
      expect(await fieldLosses(session, seed, zulipFieldFates(seed, realmId), readme('zulip'), POLICIES)).toEqual([])
    } finally {
      await session.close()
    }
  })
})

describe('rocketchat: no field of a source document is dropped silently', () => {
  it.each([{ name: 'the grounded fixture', seed: groundedRocketChatSeed() }])('$name', async ({ seed }) => {
    const path = writeRocketChatDump(seed)
    const session = await createRocketChatConnector(RocketChatConfigSchema.parse({ connector: 'rocketchat', path })).open()
    try {
      expect(await fieldLosses(session, rocketchatRows(seed), rocketchatFieldFates(seed), readme('rocketchat'), POLICIES)).toEqual([])
    } finally {
      await session.close()
    }
  })
})

describe('sendbird: no field of an exported record is dropped silently', () => {
  it('the fixture (Data Export JSON)', async () => {
    const seed = sendbirdSeed()
    const fx = await writeSendbirdExports(seed, 'json', 'folder')
    const session = await createSendbirdConnector(SendbirdConfigSchema.parse({ connector: 'sendbird', export: fx.paths })).open()
    try {
      expect(await fieldLosses(session, sendbirdRows(seed), sendbirdFieldFates(seed), readme('sendbird'), POLICIES)).toEqual([])
    } finally {
      await session.close()
      await fx.drop()
    }
  })
})
