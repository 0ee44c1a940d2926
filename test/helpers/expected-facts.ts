/**
 * What the end-to-end oracle (expected-items.ts) states about one platform item: a list of facts,
 * each a path into the row the sandbox stores (its columns, then into the JSON of `data`,
 * `metadata`…) and a check of the value there. A field the oracle cannot state exactly has no
 * fact, or a weaker one (its start and end, its key set); nothing else of a row is compared.
 */
import { isDeepStrictEqual } from 'node:util'

export type Check =
  /** Deep-equal (as JSON: key order ignored); `null` means absent. */
  | { readonly eq: unknown }
  /** A string that starts and ends so (a reply prefixed with its parent's quote). */
  | { readonly startsWith: string; readonly endsWith: string }
  /** An object with exactly these keys. */
  | { readonly keys: readonly string[] }

export interface Fact {
  readonly path: readonly (string | number)[]
  readonly check: Check
}

/** The facts of one item, by path (`data.metadata.legacy.parent`; see {@link pathOf}). */
export type ItemFacts = Map<string, Fact>

export interface ExpectedItems {
  readonly users: Map<string, ItemFacts>
  readonly groups: Map<string, ItemFacts>
  readonly members: Map<string, ItemFacts>
  /** A split message's facts hold for each of its parts. */
  readonly messages: Map<string, ItemFacts>
  /**
   * Messages `longText: split` cuts into parts `<muid>`, `<muid>-p2`, … (how many depends on where
   * the cuts fall), by muid: their whole text when stated.
   */
  readonly splits: Map<string, { readonly text: string | undefined }>
}

export const pathOf = (path: readonly (string | number)[]) => path.join('.')

/** Adds (or replaces) the fact at `path`. */
export function state(facts: ItemFacts, path: readonly (string | number)[], check: Check): void {
  facts.set(pathOf(path), { path, check })
}

/** The value stated at `path` (`data.text`): the `eq` value, the end of a string stated by its start and end; else undefined. */
export function statedValue(facts: ItemFacts | undefined, path: string): unknown {
  const c = facts?.get(path)?.check
  return c === undefined ? undefined : 'eq' in c ? c.eq : 'endsWith' in c ? c.endsWith : undefined
}

function at(row: unknown, path: readonly (string | number)[]): unknown {
  let v = row
  for (const p of path) {
    if (v === null || typeof v !== 'object') {
      return undefined
    }
    v = (v as Record<string | number, unknown>)[p]
  }
  return v
}

/** JSON round trip: jsonb reorders keys; undefined becomes null (absent). */
const norm = (v: unknown): unknown => (v === undefined || v === null ? null : JSON.parse(JSON.stringify(v)))

/** The difference between a stored row and one fact, as a sentence; undefined when it holds. */
export function violation(row: Record<string, unknown>, fact: Fact): string | undefined {
  const actual = at(row, fact.path)
  const c = fact.check
  const where = pathOf(fact.path)
  if ('eq' in c) {
    return isDeepStrictEqual(norm(actual), norm(c.eq)) ? undefined : `${where} is ${JSON.stringify(actual)}, expected ${JSON.stringify(c.eq)}`
  }
  if ('keys' in c) {
    const got = actual !== null && typeof actual === 'object' ? Object.keys(actual).sort() : undefined
    return isDeepStrictEqual(got, [...c.keys].sort())
      ? undefined
      : `${where} has keys ${JSON.stringify(got)}, expected ${JSON.stringify([...c.keys].sort())}`
  }
  const ok = typeof actual === 'string' && actual.startsWith(c.startsWith) && actual.endsWith(c.endsWith)
  return ok ? undefined : `${where} is ${JSON.stringify(actual)}, expected ${JSON.stringify(c.startsWith)}…${JSON.stringify(c.endsWith)}`
}
