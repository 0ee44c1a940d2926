/**
 * Settings of the Stream Chat connector (`source.connector: stream-chat`): a channel export file
 * (`path`), and the choices the README calls policies (custom channel types, custom fields).
 */
import { z } from 'zod'

export const DEFAULT_STREAM_PAGE_SIZE = 1000
export const MAX_STREAM_PAGE_SIZE = 50_000
/** Largest single entity of the export (one message, one channel header, one line). */
export const DEFAULT_MAX_ELEMENT_BYTES = 64 * 1024 * 1024

/** Stream's built-in channel types and the group type each becomes (README: channel types). */
export const BUILT_IN_CHANNEL_TYPES = { messaging: 'private', team: 'private', commerce: 'private', livestream: 'public', gaming: 'public' } as const

export const StreamChatConfigSchema = z
  .object({
    connector: z.literal('stream-chat'),
    /**
     * The channel export: the JSON file Stream's export task links to (v1), or its line-separated
     * JSON (v2, `version: "v2"`), plain or gzip-compressed. Relative paths are read from the
     * directory chatferry runs in.
     */
    path: z.string().min(1, 'must not be empty'),
    /** `json` (v1), `jsonl` (v2), or `auto`: `.jsonl`/`.ndjson` (also `.gz`) are v2, others v1. @default auto */
    format: z.enum(['auto', 'json', 'jsonl']).default('auto'),
    /** Rows per page. @default 1000 */
    pageSize: z.number().int().min(1).max(MAX_STREAM_PAGE_SIZE).default(DEFAULT_STREAM_PAGE_SIZE),
    /** Refuse one entity (a message, a line) over this many bytes: a problem, the file reads on. @default 64 MiB */
    maxElementBytes: z.number().int().min(1024).default(DEFAULT_MAX_ELEMENT_BYTES),
    /** The group type of channels of a custom channel type (not messaging/team/commerce/livestream/gaming). @default private */
    customChannelTypes: z.enum(['private', 'public']).default('private'),
    /** Custom fields of users, channels and messages: kept under `metadata.custom`, or dropped. @default metadata */
    customFields: z.enum(['metadata', 'drop']).default('metadata'),
  })
  .strict()
export type StreamChatConfig = z.output<typeof StreamChatConfigSchema>
export type StreamChatConfigInput = z.input<typeof StreamChatConfigSchema>
