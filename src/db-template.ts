/**
 * A migrated, empty embedded (PGlite) database cached as a data-directory tarball. Creating one
 * from scratch runs initdb inside WebAssembly and then every migration: seconds of CPU each time.
 * Loading the tarball takes a fraction of that. The sandbox's in-memory store and a new job's
 * embedded ledger both start from their own template after their first creation.
 *
 * The file name carries the PGlite version and a hash of the migrations the template holds, so
 * a new release or a new migration makes a new template; a damaged or unreadable one is ignored.
 * The cache is an optimisation only: every failure to read or write it falls back to creating
 * the database from scratch.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

import type { PGlite } from '@electric-sql/pglite'

/** Where a template is cached, or `undefined` when `env[variable]` is `off`. */
export function templateFile(variable: string, defaultDir: string, migrations: readonly string[]): string | undefined {
  const dir = process.env[variable] ?? join(tmpdir(), defaultDir)
  if (dir === 'off') {
    return undefined
  }
  let version = 'unknown'
  try {
    const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite')
    version = (JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string }).version
  } catch {
    // Without a version the cache key still changes with the migrations.
  }
  // A hash, not the names themselves: a ledger's dozens of migration names exceed a file name's 255 bytes.
  const held = createHash('sha256').update(migrations.join('\n')).digest('hex').slice(0, 16)
  return join(dir, `pglite-${version}-${held}.tar.gz`.replace(/[^A-Za-z0-9.+_-]/g, '_'))
}

/** The cached template's bytes, or `undefined` when there is none yet (or it cannot be read). */
export function readTemplate(file: string | undefined): Blob | undefined {
  if (file === undefined) {
    return undefined
  }
  try {
    return new Blob([new Uint8Array(readFileSync(file))])
  } catch {
    return undefined
  }
}

/** Dumps `pglite` (migrated, still empty) as the template; written whole or not at all. */
export async function saveTemplate(file: string | undefined, pglite: PGlite): Promise<void> {
  if (file === undefined) {
    return
  }
  try {
    const dump = await pglite.dumpDataDir('gzip')
    mkdirSync(dirname(file), { recursive: true })
    const tmp = `${file}.${process.pid}.tmp`
    writeFileSync(tmp, new Uint8Array(await dump.arrayBuffer()))
    renameSync(tmp, file)
  } catch {
    // The cache is an optimisation only.
  }
}
