/**
 * The Stream Chat connector: reads a Stream Chat history from its channel export file
 * (export/session.ts) or over its REST API (api/session.ts) and turns it into the canonical model.
 * See README.md for the mapping.
 */
import type { SourceConnector } from '../../src/model/connector.ts'
import { openApi } from './api/session.ts'
import type { StreamChatConfig } from './config.ts'
import { openExport } from './export/session.ts'

export { type StreamChatConfig, type StreamChatConfigInput, StreamChatConfigSchema } from './config.ts'

/** The Stream Chat connector for these settings. */
export function createStreamChatConnector(config: StreamChatConfig): SourceConnector {
  return {
    id: 'stream-chat',
    open: () => (config.api !== undefined ? openApi(config, config.api) : openExport(config, config.path as string)),
  }
}
