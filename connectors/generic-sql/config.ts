/**
 * Settings of the generic SQL connector (`source.connector: generic-sql`): one plain SELECT per
 * entity, returning columns named after the canonical fields (see README.md for the list).
 */
import { z } from 'zod'

import { TIME_FORMATS } from '../sql/decode.ts'
import { connectTimeoutMs, pageSize, sourceUrl } from '../sql/source-config.ts'
import { engineOf } from '../sql/source-url.ts'
import { statementProblems } from '../sql/statement-check.ts'
import { GenericSqlFilesSchema } from './files.ts'

const columnName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain column name (letters, digits, _)')

/** One entity's query. */
export const EntityQuerySchema = z
  .object({
    /**
     * A plain SELECT returning the canonical snake_case columns. It is wrapped as a subquery
     * (`SELECT * FROM (<query>) AS src WHERE … ORDER BY <keys> LIMIT n`), so it must not end in
     * ORDER BY/LIMIT of its own and needs no WHERE for paging.
     */
    query: z.string().trim().min(1, 'must not be empty'),
    /**
     * Key columns, unique together and never NULL, that order the rows and make the resumable
     * cursor. @default users and groups `[id]`; members `[group_id, user_id]`; messages `[sent_at, id]`
     */
    keys: z.array(columnName).min(1).optional(),
    /** How the query's timestamp columns are stored. @default auto */
    timeFormat: z.enum(TIME_FORMATS).default('auto'),
  })
  .strict()
export type EntityQuery = z.output<typeof EntityQuerySchema>

const ENTITY_NAMES = ['users', 'groups', 'members', 'messages'] as const

/** The user's query without trailing semicolons, so it can be wrapped. */
export function stripQuery(sql: string): string {
  return sql.trim().replace(/(\s*;)+\s*$/, '')
}

/**
 * Why each configured query cannot be run as one read-only statement inside its wrapper
 * (`statement-check.ts`), by entity: checked when the file is read and again before the source is
 * opened, so nothing of such a query reaches the database.
 */
export function queryTextProblems(
  url: string,
  entities: Partial<Record<(typeof ENTITY_NAMES)[number], { query: string }>>,
): { entity: string; message: string }[] {
  const engine = engineOf(url)
  if (engine === undefined) {
    return []
  }
  return ENTITY_NAMES.flatMap((entity) => {
    const query = entities[entity]?.query
    return query === undefined ? [] : statementProblems(stripQuery(query), engine).map((p) => ({ entity, message: `the query ${p}` }))
  })
}

/** The start of a query for a message: white space collapsed, at most 80 characters. */
export function queryExcerpt(sql: string): string {
  const s = sql.trim().replace(/\s+/g, ' ')
  return s.length > 80 ? `${s.slice(0, 79)}…` : s
}

export const GenericSqlConfigSchema = z
  .object({
    connector: z.literal('generic-sql'),
    /** `postgres://…`, `mysql://…` / `mariadb://…` or `sqlite:<path>`. */
    url: sourceUrl,
    /** Rows per page. @default 1000 */
    pageSize,
    /** Milliseconds to wait for the database. @default 10000 */
    connectTimeoutMs,
    /** One query per entity; an entity without a query has no rows. */
    entities: z
      .object({
        users: EntityQuerySchema.optional(),
        groups: EntityQuerySchema.optional(),
        members: EntityQuerySchema.optional(),
        messages: EntityQuerySchema.optional(),
      })
      .strict(),
    /**
     * Where the attachments' bytes are, for the files lane (`files.mode: rehost`): a key of each
     * attachment object naming a URL, a path under a directory, or an S3 key (files.ts). Absent:
     * the lane reads each attachment's `url`.
     */
    files: GenericSqlFilesSchema.optional(),
  })
  .strict()
  .superRefine((config, ctx) => {
    for (const p of queryTextProblems(config.url, config.entities)) {
      ctx.addIssue({
        code: 'custom',
        path: ['entities', p.entity, 'query'],
        message: `refused: chatferry reads the source read-only, and ${p.message}`,
      })
    }
  })
export type GenericSqlConfig = z.output<typeof GenericSqlConfigSchema>
export type GenericSqlConfigInput = z.input<typeof GenericSqlConfigSchema>
