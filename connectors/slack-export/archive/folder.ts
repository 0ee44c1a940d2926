/** A Slack export unpacked into a folder. */
import { createReadStream, readdirSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Readable } from 'node:stream'

import { ChatferryError } from '../../../src/errors.ts'
import { addToListing, byCodeUnits, type ExportArchive, type Listing, nestedRoot, sortListing } from './archive.ts'

function list(root: string): Listing {
  const listing: Listing = { top: new Set(), folders: new Map() }
  for (const d of readdirSync(root, { withFileTypes: true })) {
    if (d.isFile()) {
      addToListing(listing, d.name)
    } else if (d.isDirectory()) {
      listing.folders.set(d.name, [])
      for (const f of readdirSync(join(root, d.name), { withFileTypes: true })) {
        if (f.isFile()) {
          addToListing(listing, `${d.name}/${f.name}`)
        }
      }
    }
  }
  sortListing(listing)
  return listing
}

export function openFolderArchive(path: string): ExportArchive {
  let root = path
  let listing: Listing
  try {
    listing = list(root)
    const paths = [...listing.top, ...[...listing.folders].flatMap(([d, files]) => files.map((f) => `${d}/${f}`))]
    const nested = nestedRoot(paths)
    if (nested !== undefined) {
      root = join(path, nested)
      listing = list(root)
    }
  } catch (err) {
    throw new ChatferryError(
      'SOURCE_UNAVAILABLE',
      `cannot list the Slack export folder ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      {
        cause: err,
      },
    )
  }
  let modifiedAt = 0
  for (const name of listing.top) {
    modifiedAt = Math.max(modifiedAt, statSync(join(root, name)).mtimeMs)
  }
  const folders = [...listing.folders.keys()].sort(byCodeUnits)
  return {
    label: path,
    modifiedAt: Math.floor(modifiedAt),
    hasFile: (name) => listing.top.has(name),
    folders: () => folders,
    filesIn: (folder) => listing.folders.get(folder) ?? [],
    open: (p): Promise<Readable> =>
      new Promise((resolve, reject) => {
        const s = createReadStream(join(root, ...p.split('/')))
        s.once('open', () => resolve(s))
        s.once('error', reject)
      }),
    // One read of the whole file: a stream would read a day file in 64 KiB chunks, one round trip each.
    read: (p) => readFile(join(root, ...p.split('/'))),
    close: async () => {},
  }
}
