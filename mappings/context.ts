/**
 * A {@link MappingContext} backed by in-memory maps: for tests, the demo, and pipelines that keep
 * their planned lookups in memory.
 */
import { type IdRegistry, MemoryIdRegistry } from './ids.ts'
import { type Policies, type PoliciesInput, PoliciesSchema } from './policies.ts'
import type { MappingContext, PlannedGroup, PlannedMessage, PlannedUser, SkippedRef } from './types.ts'
import type { AdjustFn } from './user-module.ts'

type Table<T> = ReadonlyMap<string, T | SkippedRef> | Readonly<Record<string, T | SkippedRef>>

export interface MemoryContextOptions {
  /** Epoch ms. */
  readonly now: number
  /** Parsed policies, or input to parse (defaults filled in). @default all defaults */
  readonly policies?: Policies | PoliciesInput
  readonly ids?: IdRegistry
  readonly users?: Table<PlannedUser>
  readonly groups?: Table<PlannedGroup>
  readonly messages?: Table<PlannedMessage>
  readonly adjust?: AdjustFn
}

function lookup<T>(table: Table<T> | undefined): (id: string) => T | SkippedRef | undefined {
  if (table === undefined) {
    return () => undefined
  }
  if (table instanceof Map) {
    return (id) => table.get(id)
  }
  const record = table as Readonly<Record<string, T | SkippedRef>>
  return (id) => (Object.hasOwn(record, id) ? record[id] : undefined)
}

export function createMappingContext(options: MemoryContextOptions): MappingContext {
  const ctx: MappingContext = {
    now: options.now,
    policies: PoliciesSchema.parse(options.policies ?? {}),
    ids: options.ids ?? new MemoryIdRegistry(),
    user: lookup(options.users),
    group: lookup(options.groups),
    message: lookup(options.messages),
  }
  return options.adjust === undefined ? ctx : { ...ctx, adjust: options.adjust }
}
