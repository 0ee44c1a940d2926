/**
 * Settings of the generic SQL connector (`source.connector: generic-sql`): one plain SELECT per
 * entity, returning columns named after the canonical fields (see README.md for the list).
 */
import { z } from 'zod'

import { TIME_FORMATS } from '../sql/decode.ts'
import { connectTimeoutMs, pageSize, sourceUrl } from '../sql/source-config.ts'

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
  })
  .strict()
export type GenericSqlConfig = z.output<typeof GenericSqlConfigSchema>
export type GenericSqlConfigInput = z.input<typeof GenericSqlConfigSchema>
