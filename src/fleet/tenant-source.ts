/**
 * A tenant's legacy source in a fleet file: a full `source:` block (as in chatferry.yaml), or a
 * template over one shared legacy database named under `sources:`:
 * - generic-sql: the shared block names `tenantColumn`, a column every entity query returns; the
 *   tenant's `tenantValue` keeps the rows whose column holds it (each query is wrapped as
 *   `SELECT * FROM (<query>\n) AS chatferry_tenant WHERE chatferry_tenant.<column> = <value>`);
 * - mattermost: the tenant's `team` (a Mattermost team name) becomes the connector's `team:`.
 */
import { z } from 'zod'

import { GenericSqlConfigSchema, stripQuery } from '../../connectors/generic-sql/config.ts'
import { MATTERMOST_TEAM_NAME, MattermostConfigSchema } from '../../connectors/mattermost/config.ts'

const columnName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain column name (letters, digits, _)')

/** A shared legacy database several tenants read from. */
export const SharedSourceSchema = z.discriminatedUnion('connector', [
  GenericSqlConfigSchema.extend({
    /** The column of every entity query that says which tenant a row belongs to. */
    tenantColumn: columnName,
  }),
  MattermostConfigSchema.omit({ team: true }),
])
export type SharedSource = z.output<typeof SharedSourceSchema>

/**
 * A tenant value as a SQL literal: an integer, or text of letters, digits and ` _.:@-` (no quote
 * or backslash, so the literal means the same on Postgres, MySQL/MariaDB and SQLite).
 */
const TenantValue = z.union([
  z.number().int().safe(),
  z.string().regex(/^[A-Za-z0-9 _.:@-]{1,200}$/, 'must be an integer, or 1–200 of letters, digits, space and _ . : @ -'),
])

const TemplateSchema = z
  .object({
    /** The name of a shared source under `sources:`. */
    template: z.string().min(1),
    /** generic-sql: this tenant's value of the shared source's `tenantColumn`. */
    tenantValue: TenantValue.optional(),
    /** mattermost: this tenant's team (its name, as in the team's URL). */
    team: MATTERMOST_TEAM_NAME.optional(),
  })
  .strict()

const FullBlockSchema = z.object({ connector: z.string() }).loose()

export const TenantSourceSchema = z.union([TemplateSchema, FullBlockSchema], {
  error: 'must be a source block (connector: generic-sql or mattermost, …) or {template: <shared source>, tenantValue: … | team: …}',
})
export type TenantSource = z.output<typeof TenantSourceSchema>

function sqlLiteral(value: string | number): string {
  return typeof value === 'number' ? String(value) : `'${value}'`
}

/** The tenant's concrete `source:` block, or what is wrong with its template (and which field). */
export function tenantSourceBlock(
  spec: TenantSource,
  sources: Readonly<Record<string, SharedSource>>,
): { source: unknown } | { field: string; problem: string } {
  if (!('template' in spec) || typeof spec.template !== 'string') {
    return { source: spec }
  }
  const t = spec as z.output<typeof TemplateSchema>
  const shared = sources[t.template]
  if (shared === undefined) {
    const names = Object.keys(sources)
    return {
      field: 'template',
      problem: `no shared source ${JSON.stringify(t.template)} under sources: (${names.length ? `have ${names.join(', ')}` : 'none defined'})`,
    }
  }
  if (shared.connector === 'generic-sql') {
    if (t.team !== undefined) {
      return { field: 'team', problem: `team is for a mattermost template; ${t.template} is generic-sql: give tenantValue` }
    }
    if (t.tenantValue === undefined) {
      return { field: 'tenantValue', problem: `is required: this tenant's value of ${t.template}'s tenantColumn ${shared.tenantColumn}` }
    }
    const { tenantColumn, ...block } = shared
    const where = `chatferry_tenant.${tenantColumn} = ${sqlLiteral(t.tenantValue)}`
    const entities = Object.fromEntries(
      Object.entries(block.entities).map(([entity, q]) => [
        entity,
        // The template's query as generic-sql wraps it: trailing semicolons off, and the closing
        // parenthesis on a line of its own so that a trailing `-- comment` cannot swallow it.
        q && { ...q, query: `SELECT * FROM (${stripQuery(q.query)}\n) AS chatferry_tenant WHERE ${where}` },
      ]),
    )
    return { source: { ...block, entities } }
  }
  if (t.tenantValue !== undefined) {
    return { field: 'tenantValue', problem: `tenantValue is for a generic-sql template; ${t.template} is mattermost: give team` }
  }
  if (t.team === undefined) {
    return { field: 'team', problem: `is required: the Mattermost team this tenant is (its name, as in the team's URL)` }
  }
  return { source: { ...shared, team: t.team } }
}
