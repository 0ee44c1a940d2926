/**
 * The source connectors, in one static typed registry: `source.connector` in the configuration
 * picks one. Adding a connector (docs/connectors.md, "Adding a connector"): a folder under
 * `connectors/` with `index.ts` (the factory), `config.ts` (its zod settings, discriminated by
 * `connector`) and `README.md`, then here its imports, one line in {@link connectors}, one member
 * in {@link SourceConfigSchema} and one case in {@link createConnector}.
 */
import { z } from 'zod'

import type { SourceConnector } from '../src/model/connector.ts'
import { type GenericSqlConfig, GenericSqlConfigSchema } from './generic-sql/config.ts'
import { createGenericSqlConnector } from './generic-sql/index.ts'
import { type MattermostConfig, MattermostConfigSchema } from './mattermost/config.ts'
import { createMattermostConnector } from './mattermost/index.ts'
import { type NextcloudTalkConfig, NextcloudTalkConfigSchema } from './nextcloud-talk/config.ts'
import { createNextcloudTalkConnector } from './nextcloud-talk/index.ts'
import { type RocketChatConfig, RocketChatConfigSchema } from './rocketchat/config.ts'
import { createRocketChatConnector } from './rocketchat/index.ts'
import { type SendbirdConfig, SendbirdConfigSchema } from './sendbird/config.ts'
import { createSendbirdConnector } from './sendbird/index.ts'
import { type SlackExportConfig, SlackExportConfigSchema } from './slack-export/config.ts'
import { createSlackExportConnector } from './slack-export/index.ts'
import { type StreamChatConfig, StreamChatConfigSchema } from './stream-chat/config.ts'
import { createStreamChatConnector } from './stream-chat/index.ts'
import { type TwilioConversationsConfig, TwilioConversationsConfigSchema } from './twilio-conversations/config.ts'
import { createTwilioConversationsConnector } from './twilio-conversations/index.ts'
import { type ZulipConfig, ZulipConfigSchema } from './zulip/config.ts'
import { createZulipConnector } from './zulip/index.ts'

/** Makes a connector from its parsed settings. */
export type ConnectorFactory<C = never> = (config: C) => SourceConnector

/** Every connector chatferry has, by the name `source.connector` uses. */
export const connectors = {
  'generic-sql': createGenericSqlConnector as ConnectorFactory<GenericSqlConfig>,
  mattermost: createMattermostConnector as ConnectorFactory<MattermostConfig>,
  'nextcloud-talk': createNextcloudTalkConnector as ConnectorFactory<NextcloudTalkConfig>,
  rocketchat: createRocketChatConnector as ConnectorFactory<RocketChatConfig>,
  zulip: createZulipConnector as ConnectorFactory<ZulipConfig>,
  'slack-export': createSlackExportConnector as ConnectorFactory<SlackExportConfig>,
  sendbird: createSendbirdConnector as ConnectorFactory<SendbirdConfig>,
  'stream-chat': createStreamChatConnector as ConnectorFactory<StreamChatConfig>,
  'twilio-conversations': createTwilioConversationsConnector as ConnectorFactory<TwilioConversationsConfig>,
} as const satisfies Record<string, ConnectorFactory<never>>

/** The registry's keys: the values `source.connector` accepts. */
export type ConnectorId = keyof typeof connectors
export const CONNECTOR_IDS = Object.keys(connectors) as ConnectorId[]

/**
 * The `source:` section of the configuration file: one shape per connector, chosen by
 * `connector`. Each shape is strict (unknown keys are errors).
 */
export const SourceConfigSchema = z.discriminatedUnion('connector', [
  GenericSqlConfigSchema,
  MattermostConfigSchema,
  NextcloudTalkConfigSchema,
  RocketChatConfigSchema,
  ZulipConfigSchema,
  SlackExportConfigSchema,
  SendbirdConfigSchema,
  StreamChatConfigSchema,
  TwilioConversationsConfigSchema,
])
export type SourceConfig = z.output<typeof SourceConfigSchema>
export type SourceConfigInput = z.input<typeof SourceConfigSchema>

/** The connector a parsed `source:` section names. */
export function createConnector(config: SourceConfig): SourceConnector {
  switch (config.connector) {
    case 'generic-sql':
      return connectors['generic-sql'](config)
    case 'mattermost':
      return connectors.mattermost(config)
    case 'nextcloud-talk':
      return connectors['nextcloud-talk'](config)
    case 'rocketchat':
      return connectors.rocketchat(config)
    case 'zulip':
      return connectors.zulip(config)
    case 'slack-export':
      return connectors['slack-export'](config)
    case 'sendbird':
      return connectors.sendbird(config)
    case 'stream-chat':
      return connectors['stream-chat'](config)
    case 'twilio-conversations':
      return connectors['twilio-conversations'](config)
  }
}

export type {
  GenericSqlConfig,
  MattermostConfig,
  NextcloudTalkConfig,
  RocketChatConfig,
  SendbirdConfig,
  SlackExportConfig,
  StreamChatConfig,
  TwilioConversationsConfig,
  ZulipConfig,
}
