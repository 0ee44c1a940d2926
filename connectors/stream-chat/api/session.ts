/**
 * A session over the Stream Chat REST API. Opening it checks the credentials from the environment
 * (CONFIG_INVALID naming the missing variable; SOURCE_INVALID, exit 2, when Stream refuses them)
 * and lists the app's channels (directory.ts); reads page each entity from the API (rows.ts) in
 * the shared live-API session (`connectors/rows/api-session.ts`: no snapshot, counts are full
 * reads kept for the session).
 */
import { ChatferryError } from '../../../src/errors.ts'
import type { SourceSession } from '../../../src/model/connector.ts'
import type { LegacyEntity, LegacyRecordOf } from '../../../src/model/records.ts'
import { ApiSession } from '../../rows/api-session.ts'
import { type PositionedRow, single } from '../../rows/pages.ts'
import { STREAM_DEFAULT_LIMITS, type StreamApiConfig, type StreamChatConfig } from '../config.ts'
import { serverToken } from './auth.ts'
import { StreamClient } from './client.ts'
import { listChannels } from './directory.ts'
import { apiGroupRows, apiMemberRows, apiMessageRows, type ApiRowsOptions, type ApiRowsSource, apiUserRows } from './rows.ts'

/** The channels' rows of an entity, a row at a time (rows.ts). */
function rows(src: ApiRowsSource, entity: LegacyEntity, o: ApiRowsOptions): AsyncIterable<PositionedRow<LegacyRecordOf[LegacyEntity]>> {
  switch (entity) {
    case 'users':
      return apiUserRows(src, o)
    case 'groups':
      return apiGroupRows(src, o)
    case 'members':
      return apiMemberRows(src, o)
    case 'messages':
      return apiMessageRows(src, o)
  }
}

/** The key and secret from the environment, or CONFIG_INVALID naming every missing variable. */
function credentials(api: StreamApiConfig): { apiKey: string; secret: string } {
  const apiKey = process.env[api.keyEnv]
  const secret = process.env[api.secretEnv]
  const missing = [apiKey ? undefined : api.keyEnv, secret ? undefined : api.secretEnv].filter((v): v is string => v !== undefined)
  if (missing.length > 0 || apiKey === undefined || secret === undefined) {
    throw new ChatferryError('CONFIG_INVALID', `source.api: the Stream Chat credentials are read from the environment: set ${missing.join(' and ')}`)
  }
  return { apiKey, secret }
}

export async function openApi(config: StreamChatConfig, api: StreamApiConfig): Promise<SourceSession> {
  const { apiKey, secret } = credentials(api)
  const client = new StreamClient({
    baseUrl: api.baseUrl,
    credentials: { apiKey, token: serverToken(secret) },
    limits: { ...STREAM_DEFAULT_LIMITS, ...api.limits },
    maxRetries: api.maxRetries,
  })
  try {
    const channels = await listChannels(client)
    const src: ApiRowsSource = {
      client,
      channels,
      keepCustom: config.customFields === 'metadata',
      customChannelTypes: config.customChannelTypes,
      messagePageSize: api.messagePageSize,
    }
    return new ApiSession({ rows: (entity, o) => single(rows(src, entity, o)), pageSize: config.pageSize, close: () => client.close() })
  } catch (err) {
    client.close()
    throw err
  }
}
