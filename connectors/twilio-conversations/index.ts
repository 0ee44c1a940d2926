/**
 * The Twilio Conversations connector: reads Conversation Services over Twilio's REST API (users,
 * conversations, participants, messages) and turns them into the canonical model; media messages'
 * files through its own reader (files.ts). Opening a session checks the credentials from the
 * environment and lists the conversations with their participants; reads page each entity in the
 * shared live-API session (`connectors/rows/api-session.ts`: no snapshot, counts are full reads
 * kept for the session). See README.md for the mapping.
 */
import { ChatferryError } from '../../src/errors.ts'
import type { SourceConnector } from '../../src/model/connector.ts'
import type { LegacyEntity, LegacyRecordOf } from '../../src/model/records.ts'
import { ApiSession } from '../rows/api-session.ts'
import { type PositionedRow, single } from '../rows/pages.ts'
import { TwilioClient } from './client.ts'
import type { TwilioConversationsConfig } from './config.ts'
import { listConversations, listServices } from './directory.ts'
import { twilioFileReader } from './files.ts'
import { groupRows, memberRows, messageRows, type RowsOptions, type RowsSource, userRows } from './rows.ts'

export { type TwilioConversationsConfig, TwilioConversationsConfigSchema } from './config.ts'

/** The conversations' rows of an entity, a row at a time (rows.ts). */
function rows(src: RowsSource, entity: LegacyEntity, o: RowsOptions): AsyncIterable<PositionedRow<LegacyRecordOf[LegacyEntity]>> {
  switch (entity) {
    case 'users':
      return userRows(src, o)
    case 'groups':
      return groupRows(src, o)
    case 'members':
      return memberRows(src, o)
    case 'messages':
      return messageRows(src, o)
  }
}

function credentials(config: TwilioConversationsConfig): { accountSid: string; authToken: string } {
  const accountSid = process.env[config.accountSidEnv]
  const authToken = process.env[config.authTokenEnv]
  if (!accountSid || !authToken) {
    const missing = [accountSid ? undefined : config.accountSidEnv, authToken ? undefined : config.authTokenEnv].filter(Boolean)
    throw new ChatferryError('CONFIG_INVALID', `source: the Twilio credentials are read from the environment: set ${missing.join(' and ')}`)
  }
  return { accountSid, authToken }
}

export function createTwilioConversationsConnector(config: TwilioConversationsConfig): SourceConnector {
  return {
    id: 'twilio-conversations',
    async open() {
      const creds = credentials(config)
      const client = new TwilioClient({
        baseUrl: config.baseUrl,
        ...creds,
        requestsPerSecond: config.requestsPerSecond,
        maxRetries: config.maxRetries,
      })
      try {
        const services = await listServices(client, config.services, config.apiPageSize)
        const conversations = await listConversations(client, services, config.apiPageSize)
        const src: RowsSource = {
          client,
          services,
          conversations,
          policy: { nonChatParticipants: config.nonChatParticipants },
          apiPageSize: config.apiPageSize,
          mediaBaseUrl: config.mediaBaseUrl,
        }
        return new ApiSession({ rows: (entity, o) => single(rows(src, entity, o)), pageSize: config.pageSize, close: () => client.close() })
      } catch (err) {
        client.close()
        throw err
      }
    },
    files() {
      return twilioFileReader({ mediaBaseUrl: config.mediaBaseUrl, ...credentials(config) })
    },
  }
}
