/**
 * `plan --fail-on`: CI gates on the plan report. An expression is `<metric>[.<entity>]<op><number>`,
 * e.g. `countMismatch>0` (the source counts other rows than were read), `rejected>0`, `rejected.messages>=100`, `skipped>5000`, `placeholders>0`, `hours>48`;
 * several are given by repeating the flag or separating them with commas. The plan exits non-zero
 * when any expression is true.
 */
import { LEGACY_ENTITIES, type LegacyEntity } from '../model/index.ts'
import type { PlanReport } from './schema.ts'

/** Metrics a gate can test, and how each is read from the report. */
export const GATE_METRICS = {
  rejected: (r, e) => sum(r, e, (x) => x.rejected.total),
  countMismatch: (r, e) => sum(r, e, countMismatch),
  skipped: (r, e) => sum(r, e, (x) => x.skipped.total),
  create: (r, e) => sum(r, e, (x) => x.toCreate),
  loadedChanged: (r, e) => sum(r, e, (x) => x.fates.loadedChanged),
  updates: (r, e) => sum(r, e, (x) => updateTotal(x)),
  vanished: (r, e) => sum(r, e, (x) => x.vanished ?? 0),
  referential: (r, e) => sum(r, e, (x) => Object.values(x.referential).reduce((a, v) => a + v.count, 0)),
  alreadyPresent: (r, e) => sum(r, e, (x) => x.alreadyPresent ?? 0),
  requests: (r, e) => sum(r, e, (x) => x.cost.requests),
  placeholders: (r) => r.placeholders.count,
  collisions: (r) => r.ids.collisions.count,
  beyondRetention: (r) => r.retention.beyondRetention,
  agingOut: (r) => r.retention.edge?.agingOut ?? 0,
  clamped: (r) => r.joinedAt.clamped.count,
  derivedCreatedAt: (r) => r.derivedCreatedAt.groups.count,
  hours: (r, e) => sum(r, e, (x) => x.cost.seconds) / 3600,
  targetProblems: (r) => r.target?.problems.length ?? 0,
} as const satisfies Record<string, (r: PlanReport, entity: LegacyEntity | undefined) => number>

/** Update intents a delta would record for an entity, every kind and policy. */
export function updateTotal(x: PlanReport['entities'][LegacyEntity]): number {
  return Object.values(x.updates).reduce((a, byPolicy) => a + Object.values(byPolicy).reduce((b, c) => b + c.count, 0), 0)
}

/** Rows the source counts but the read did not yield, or the other way round (0 when not counted). */
export function countMismatch(x: PlanReport['entities'][LegacyEntity]): number {
  return x.sourceCount === null ? 0 : Math.abs(x.sourceCount - x.sourceRows)
}

type Metric = keyof typeof GATE_METRICS
type Op = '>=' | '<=' | '>' | '<' | '=='

function sum(r: PlanReport, entity: LegacyEntity | undefined, f: (x: PlanReport['entities'][LegacyEntity]) => number): number {
  const list: readonly LegacyEntity[] = entity ? [entity] : LEGACY_ENTITIES
  return list.reduce<number>((a, e) => a + f(r.entities[e]), 0)
}

export interface GateSpec {
  readonly expression: string
  readonly metric: Metric
  readonly entity: LegacyEntity | undefined
  readonly op: Op
  readonly threshold: number
}

/** Parses gate expressions; throws a message naming the bad one. */
export function parseGates(expressions: readonly string[]): GateSpec[] {
  const specs: GateSpec[] = []
  for (const raw of expressions.flatMap((x) => x.split(','))) {
    const expression = raw.trim()
    if (expression === '') {
      continue
    }
    const m = /^([a-zA-Z]+)(?:\.([a-z]+))?\s*(>=|<=|==|=|>|<)\s*(-?\d+(?:\.\d+)?)$/.exec(expression)
    if (!m) {
      throw new Error(`--fail-on ${JSON.stringify(expression)}: expected <metric>[.<entity>]<op><number>, e.g. rejected>0`)
    }
    const metric = m[1] as string
    if (!(metric in GATE_METRICS)) {
      throw new Error(`--fail-on ${JSON.stringify(expression)}: unknown metric ${metric}; use one of ${Object.keys(GATE_METRICS).join(', ')}`)
    }
    const entity = m[2]
    if (entity !== undefined && !(LEGACY_ENTITIES as readonly string[]).includes(entity)) {
      throw new Error(`--fail-on ${JSON.stringify(expression)}: unknown entity ${entity}; use one of ${LEGACY_ENTITIES.join(', ')}`)
    }
    const op = (m[3] === '=' ? '==' : m[3]) as Op
    specs.push({ expression, metric: metric as Metric, entity: entity as LegacyEntity | undefined, op, threshold: Number(m[4]) })
  }
  return specs
}

/** Evaluates gates: `passed` is false when the expression holds (the plan then fails). */
export function evaluateGates(report: PlanReport, specs: readonly GateSpec[]): PlanReport['gates'] {
  return specs.map((s) => {
    const value = GATE_METRICS[s.metric](report, s.entity)
    const hit =
      s.op === '>'
        ? value > s.threshold
        : s.op === '>='
          ? value >= s.threshold
          : s.op === '<'
            ? value < s.threshold
            : s.op === '<='
              ? value <= s.threshold
              : value === s.threshold
    return { expression: s.expression, value, passed: !hit }
  })
}
