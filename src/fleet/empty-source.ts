/**
 * A tenant whose source yields no rows at all in a full run is never `done`: a mistyped
 * `tenantValue` (or team, or a query that selects nothing) reads zero rows, plans nothing and
 * loads nothing, which would otherwise end as a tenant migrated. Its outcome is `failed`, needing a
 * fix, and the reason names what selected nothing: the tenant value and the query it filters, or
 * the team, or the entity queries. A delta run, or a rerun of a tenant whose ledger already holds
 * items, reads only what is new, so zero rows there is normal.
 */
import type { PlanJobSummary } from '../plan/plan-job.ts'

const ENTITY_ORDER = ['users', 'groups', 'members', 'messages'] as const

/** What selected the tenant's rows, for the reason: the template's filter and a query, the team, or the source. */
function selection(source: unknown): string {
  const s = (source ?? {}) as { connector?: string; team?: string; entities?: Record<string, { query?: string } | undefined> }
  if (s.team !== undefined) {
    return `its Mattermost team ${JSON.stringify(s.team)} (source team:): check the team's name`
  }
  const queries = ENTITY_ORDER.map((e) => [e, s.entities?.[e]?.query] as const).filter(
    (q): q is readonly [(typeof ENTITY_ORDER)[number], string] => q[1] !== undefined,
  )
  const filter = queries.map(([, q]) => /AS chatferry_tenant WHERE (chatferry_tenant\.\S+ = .+)$/s.exec(q)?.[1]).find((w) => w !== undefined)
  // The query on one line: the wrapper puts its closing parenthesis on a line of its own.
  const first = queries[0] && ([queries[0][0], queries[0][1].replace(/\s+/g, ' ')] as const)
  if (filter !== undefined && first !== undefined) {
    return `its tenant value selects nothing (${filter}, e.g. the ${first[0]} query: ${first[1]}): check tenantValue and the shared source's tenantColumn`
  }
  return first !== undefined
    ? `its queries select nothing (the ${first[0]} query: ${first[1]}): check the source`
    : 'its source has no rows: check the source'
}

/**
 * The reason a tenant's source has yielded no rows at all — none read by this full run's plan, and
 * no item in its ledger from an earlier one (a rerun reads only what is new) — or undefined.
 */
export function emptySourceReason(
  tenantId: string,
  source: unknown,
  plan: PlanJobSummary,
  mode: 'full' | 'delta',
  ledgerItems: number,
): string | undefined {
  if (mode !== 'full' || ledgerItems > 0) {
    return undefined
  }
  const rows = Object.values(plan.entities).reduce((n, e) => n + e.sourceRows, 0)
  if (rows > 0) {
    return undefined
  }
  return `tenant ${tenantId}: its source yielded no rows at all (users, groups, members, messages: 0); ${selection(source)}. Nothing was loaded`
}
