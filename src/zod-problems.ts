import type { z } from 'zod'

import { closestName } from './did-you-mean.ts'
import type { ConfigProblem } from './errors.ts'

/**
 * Turns zod issues into path + message pairs, the way configuration problems are reported. Given
 * the schema and the input it parsed, an unknown key that is a typo of a known one says so
 * (`unknown key: polices (did you mean policies?)`).
 */
export function zodProblems(
  error: z.ZodError,
  prefix: readonly (string | number)[] = [],
  parsed?: { readonly schema: z.ZodType; readonly input: unknown },
): ConfigProblem[] {
  return error.issues.map((issue) => {
    const path = [...prefix, ...issue.path].map(String).join('.')
    if (issue.code === 'unrecognized_keys') {
      const known = parsed ? knownKeysAt(parsed.schema, parsed.input, issue.path) : []
      const keys = issue.keys.map((k) => {
        const near = closestName(k, known)
        return near === undefined ? k : `${k} (did you mean ${near}?)`
      })
      return { path, message: `unknown key${issue.keys.length === 1 ? '' : 's'}: ${keys.join(', ')}` }
    }
    if (issue.code === 'invalid_type' && issue.input === undefined) {
      return { path, message: 'is required' }
    }
    return { path, message: issue.message }
  })
}

/** zod 4's definition of a schema, as far as finding an object's keys needs it. */
interface Def {
  readonly type: string
  readonly shape?: Record<string, z.ZodType>
  readonly innerType?: z.ZodType
  readonly in?: z.ZodType
  readonly element?: z.ZodType
  readonly valueType?: z.ZodType
  readonly options?: readonly z.ZodType[]
  readonly left?: z.ZodType
  readonly right?: z.ZodType
  getter?(): z.ZodType
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def

/** The keys the object schema at `path` knows (the option of a union that the input's own values pick). */
export function knownKeysAt(schema: z.ZodType, input: unknown, path: readonly PropertyKey[]): string[] {
  const def = defOf(schema)
  const inner = def.innerType ?? def.in ?? (def.type === 'lazy' ? def.getter?.() : undefined)
  if (inner !== undefined) {
    return knownKeysAt(inner, input, path)
  }
  if (def.type === 'union' && def.options) {
    const fits = def.options.filter((o) => objectFits(o, input))
    return [...new Set((fits.length > 0 ? fits : def.options).flatMap((o) => knownKeysAt(o, input, path)))]
  }
  if (def.type === 'intersection' && def.left && def.right) {
    return [...knownKeysAt(def.left, input, path), ...knownKeysAt(def.right, input, path)]
  }
  const [head, ...rest] = path
  const child = (input as Record<PropertyKey, unknown> | null | undefined)?.[head as PropertyKey]
  if (def.type === 'object' && def.shape) {
    if (head === undefined) {
      return Object.keys(def.shape)
    }
    const next = def.shape[String(head)]
    return next ? knownKeysAt(next, child, rest) : []
  }
  const element = def.element ?? def.valueType
  return element && head !== undefined ? knownKeysAt(element, child, rest) : []
}

/** Whether an object option of a union takes the input's literal fields (a discriminated union's tag). */
function objectFits(option: z.ZodType, input: unknown): boolean {
  const def = defOf(option)
  if (def.type !== 'object' || !def.shape || input === null || typeof input !== 'object') {
    return false
  }
  return Object.entries(def.shape).every(
    ([key, field]) => defOf(field).type !== 'literal' || field.safeParse((input as Record<string, unknown>)[key]).success,
  )
}
