/**
 * The Sendbird connector: reads a Sendbird Chat application from its Data Export files (users,
 * channels, messages; JSON or CSV; ZIPs or folders) or over its Platform API v3 (read-only, paced
 * at the plan's documented rate limit, resumable from its cursor). Entity order: users → groups
 * (group and open channels; two-member private channels are one-to-one conversations) → members
 * → messages. See README.md for the mapping.
 */
import { ChatferryError } from '../../src/errors.ts'
import type { SourceConnector, SourceSession } from '../../src/model/connector.ts'
import { SendbirdClient } from './api/client.ts'
import { sendbirdApiSession } from './api/session.ts'
import type { SendbirdApiConfig, SendbirdConfig, SendbirdExportConfig } from './config.ts'
import { openExports } from './export/files.ts'
import { SendbirdExportSession } from './export/session.ts'

export { type SendbirdConfig, type SendbirdConfigInput, SendbirdConfigSchema } from './config.ts'

async function openExport(config: SendbirdExportConfig, pageSize: number): Promise<SourceSession> {
  const limits = { maxEntryBytes: config.maxEntryBytes, maxArchiveBytes: config.maxArchiveBytes, maxElementBytes: config.maxElementBytes }
  const opened: { archives: Awaited<ReturnType<typeof openExports>>['archives'] }[] = []
  try {
    const users = await openExports(config.users, limits)
    opened.push(users)
    const channels = await openExports(config.channels, limits)
    opened.push(channels)
    const messages = await openExports(config.messages, limits)
    opened.push(messages)
    const archives = [...users.archives, ...channels.archives, ...messages.archives]
    return new SendbirdExportSession({ archives, users: users.files, channels: channels.files, messages: messages.files }, config, pageSize)
  } catch (err) {
    await Promise.all(opened.flatMap((o) => o.archives.map((a) => a.close())))
    throw err
  }
}

/**
 * Opens the API: one `GET /users?limit=1` first, so a wrong token (SOURCE_INVALID, exit 2) or an
 * unreachable host (SOURCE_UNAVAILABLE) fails before anything is read.
 */
async function openApi(config: SendbirdApiConfig, pageSize: number): Promise<SourceSession> {
  const client = new SendbirdClient(config)
  try {
    await client.get('users', { limit: 1 })
  } catch (err) {
    if (err instanceof ChatferryError) {
      throw err
    }
    throw new ChatferryError('SOURCE_UNAVAILABLE', `cannot read ${client.label}: ${(err as Error).message}`)
  }
  return sendbirdApiSession(client, pageSize)
}

export function createSendbirdConnector(config: SendbirdConfig): SourceConnector {
  return {
    id: 'sendbird',
    open: () =>
      config.export !== undefined ? openExport(config.export, config.pageSize) : openApi(config.api as SendbirdApiConfig, config.pageSize),
  }
}
