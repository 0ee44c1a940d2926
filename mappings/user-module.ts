/**
 * The user module: a file the operator writes (`policies.module: ./adjust.ts`) to adjust mapped
 * items without forking chatferry — custom fields, renames, extra tags, skipping records.
 *
 * ```ts
 * // adjust.ts
 * import type { AdjustFn } from 'chatferry/mappings/user-module.ts'
 * export const adjust: AdjustFn = (entity, item, record) => {
 *   if (entity === 'users') return { ...item, metadata: { ...item.metadata, dept: 'sales' } }
 *   if (entity === 'messages' && record.text?.startsWith('/giphy')) return null // skip
 *   return item // or undefined: unchanged
 * }
 * ```
 *
 * {@link loadUserModule} (I/O) is called once by the pipeline; the loaded function is then applied
 * purely inside the mapping: it gets a copy of each item, its result is validated again, and a
 * throw or an invalid result rejects that record only.
 */
import { isAbsolute, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

import type { LegacyRecordOf } from '../src/model/index.ts'
import type { Entity, ImportItemOf } from '../src/target/schemas.ts'

type AdjustArgs = { [E in Entity]: [entity: E, item: ImportItemOf[E], record: LegacyRecordOf[E]] }[Entity]

/**
 * Receives a copy of a mapped item and the legacy record it came from. Returns the item to import
 * (modified or not), `undefined` for "unchanged", or `null` to skip the record (reason
 * `user-module`). Must be synchronous and must not do I/O.
 */
export type AdjustFn = (...args: AdjustArgs) => ImportItemOf[Entity] | null | undefined

export interface UserModule {
  readonly path: string
  readonly adjust: AdjustFn
}

/**
 * Imports the module at `path` (relative to `baseDir`, usually the config file's folder) and
 * checks that it exports `adjust` (named, or on the default export). Throws a clear error
 * otherwise: a broken module stops the run before anything is mapped.
 */
export async function loadUserModule(path: string, baseDir: string = process.cwd()): Promise<UserModule> {
  const file = isAbsolute(path) ? path : resolve(baseDir, path)
  let mod: Record<string, unknown>
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>
  } catch (err) {
    throw new Error(`policies.module: cannot load ${file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
  }
  const fromDefault = (mod.default as Record<string, unknown> | undefined)?.adjust
  const adjust = typeof mod.adjust === 'function' ? mod.adjust : typeof mod.default === 'function' ? mod.default : fromDefault
  if (typeof adjust !== 'function') {
    throw new Error(`policies.module: ${file} must export a function \`adjust(entity, item, record)\`, got ${typeof adjust}`)
  }
  return { path: file, adjust: adjust as AdjustFn }
}
