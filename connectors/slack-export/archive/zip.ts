/**
 * A Slack export ZIP, read in place with yauzl: the central directory once (the file listing),
 * then each file as a stream on demand — the archive is never unpacked or held in memory.
 *
 * Slack writes its entry names in UTF-8 without setting the ZIP's UTF-8 flag, so a reader that
 * follows the spec decodes `café` as CP437 mojibake: names are read as raw bytes and decoded as
 * UTF-8 here.
 */
import type { Readable } from 'node:stream'

import yauzl from 'yauzl'

import { ChatferryError } from '../../../src/errors.ts'
import { addToListing, byCodeUnits, bytesOf, type ExportArchive, type Listing, nestedRoot, sortListing } from './archive.ts'

function nameOf(entry: yauzl.Entry): string {
  const raw = entry.fileName as unknown as Buffer | string
  return typeof raw === 'string' ? raw : raw.toString('utf8')
}

async function readDirectory(zip: yauzl.ZipFile): Promise<Map<string, yauzl.Entry>> {
  const entries = new Map<string, yauzl.Entry>()
  for await (const entry of zip.eachEntry()) {
    const name = nameOf(entry)
    if (!name.endsWith('/') && !name.split('/').includes('..')) {
      entries.set(name, entry)
    }
  }
  return entries
}

export async function openZipArchive(path: string): Promise<ExportArchive> {
  let zip: yauzl.ZipFile
  let entries: Map<string, yauzl.Entry>
  try {
    zip = await yauzl.openPromise(path, { autoClose: false, decodeStrings: false, lazyEntries: true })
  } catch (err) {
    throw new ChatferryError('SOURCE_INVALID', `cannot open the Slack export ${path} as a ZIP file: ${(err as Error).message}`, { cause: err })
  }
  try {
    entries = await readDirectory(zip)
  } catch (err) {
    zip.close()
    throw new ChatferryError('SOURCE_INVALID', `cannot read the ZIP directory of the Slack export ${path}: ${(err as Error).message}`, { cause: err })
  }
  const prefix = nestedRoot(entries.keys())
  const listing: Listing = { top: new Set(), folders: new Map() }
  const byPath = new Map<string, yauzl.Entry>()
  let modifiedAt = 0
  for (const [name, entry] of entries) {
    if (prefix !== undefined && !name.startsWith(`${prefix}/`)) {
      continue
    }
    const inner = prefix === undefined ? name : name.slice(prefix.length + 1)
    addToListing(listing, inner)
    byPath.set(inner, entry)
    if (!inner.includes('/')) {
      modifiedAt = Math.max(modifiedAt, entry.getLastModDate().getTime())
    }
  }
  sortListing(listing)
  const folders = [...listing.folders.keys()].sort(byCodeUnits)
  const entryStream = async (p: string): Promise<Readable> => {
    const entry = byPath.get(p)
    if (entry === undefined) {
      throw new ChatferryError('SOURCE_INVALID', `the Slack export ${path} has no file ${p}`)
    }
    return zip.openReadStreamPromise(entry)
  }
  let open = true
  return {
    label: path,
    modifiedAt,
    hasFile: (name) => listing.top.has(name),
    folders: () => folders,
    filesIn: (folder) => listing.folders.get(folder) ?? [],
    open: entryStream,
    read: async (p) => bytesOf(await entryStream(p)),
    async close() {
      if (open) {
        open = false
        zip.close()
      }
    },
  }
}
