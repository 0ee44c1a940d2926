/**
 * A Slack export ZIP, read in place with yauzl: the central directory once (the file listing),
 * then each file as a stream on demand — the archive is never unpacked or held in memory.
 *
 * Slack writes its entry names in UTF-8 without setting the ZIP's UTF-8 flag, so a reader that
 * follows the spec decodes `café` as CP437 mojibake: names are read as raw bytes and decoded as
 * UTF-8 here (yauzl checks names only when it decodes them, so entries.ts checks them instead).
 */
import yauzl from 'yauzl'

import { ChatferryError } from '../../src/errors.ts'
import { buildListing, byCodeUnits, type RawEntry } from './entries.ts'
import { bytesOf, EntryUnreadable, guarded, skipBytes } from './guard.ts'
import type { ArchiveLimits, ExportArchive } from './types.ts'

function nameOf(entry: yauzl.Entry): string {
  const raw = entry.fileName as unknown as Buffer | string
  return typeof raw === 'string' ? raw : raw.toString('utf8')
}

const S_IFMT = 0o170000
const S_IFLNK = 0o120000
const S_IFDIR = 0o040000

/** What an entry is: a Unix-made ZIP records the file type in the high half of the external attributes. */
function kindOf(entry: yauzl.Entry, name: string): RawEntry<yauzl.Entry>['kind'] {
  const madeOnUnix = entry.versionMadeBy >> 8 === 3
  const type = (entry.externalFileAttributes >>> 16) & S_IFMT
  if (madeOnUnix && type === S_IFLNK) {
    return 'symlink'
  }
  return name.endsWith('/') || (madeOnUnix && type === S_IFDIR) ? 'dir' : 'file'
}

async function readDirectory(zip: yauzl.ZipFile): Promise<RawEntry<yauzl.Entry>[]> {
  const entries: RawEntry<yauzl.Entry>[] = []
  for await (const entry of zip.eachEntry()) {
    const name = nameOf(entry)
    entries.push({ name, kind: kindOf(entry, name), size: entry.uncompressedSize, ref: entry })
  }
  return entries
}

export async function openZipArchive(path: string, limits: ArchiveLimits): Promise<{ archive: ExportArchive; totalBytes: number }> {
  let zip: yauzl.ZipFile
  let raw: RawEntry<yauzl.Entry>[]
  try {
    zip = await yauzl.openPromise(path, { autoClose: false, decodeStrings: false, lazyEntries: true, validateEntrySizes: true })
  } catch (err) {
    throw new ChatferryError('SOURCE_INVALID', `cannot open the Slack export ${path} as a ZIP file: ${(err as Error).message}`, { cause: err })
  }
  try {
    raw = await readDirectory(zip)
  } catch (err) {
    zip.close()
    throw new ChatferryError('SOURCE_INVALID', `cannot read the ZIP directory of the Slack export ${path}: ${(err as Error).message}`, { cause: err })
  }
  const listing = buildListing(raw)
  let modifiedAt = 0
  for (const name of listing.top) {
    modifiedAt = Math.max(modifiedAt, (listing.byPath.get(name)?.ref as yauzl.Entry).getLastModDate().getTime())
  }
  const folders = [...listing.folders.keys()].sort(byCodeUnits)
  const entryOf = (p: string) => {
    const found = listing.byPath.get(p)
    if (found === undefined) {
      throw new ChatferryError('SOURCE_INVALID', `the Slack export ${path} has no file ${p}`)
    }
    return found.ref
  }
  const open = async (p: string, offset = 0): Promise<AsyncIterable<Buffer>> => {
    const entry = entryOf(p)
    const name = `entry ${p} of ${path}`
    if (entry.uncompressedSize > limits.maxEntryBytes) {
      throw new EntryUnreadable(
        name,
        `inflates to ${entry.uncompressedSize} bytes by the ZIP's directory, over source.maxEntryBytes (${limits.maxEntryBytes}): not read`,
      )
    }
    let stream: AsyncIterable<Buffer>
    try {
      stream = await zip.openReadStreamPromise(entry)
    } catch (err) {
      throw new EntryUnreadable(name, `is corrupt: ${(err as Error).message}`, { cause: err })
    }
    const checked = guarded(stream, { entry: name, maxBytes: entry.uncompressedSize, capName: 'the size the ZIP declares for it', crc: entry.crc32 })
    return offset > 0 ? skipBytes(checked, offset) : checked
  }
  let isOpen = true
  const archive: ExportArchive = {
    label: path,
    modifiedAt,
    limits,
    refused: listing.refused,
    hasFile: (name) => listing.top.has(name),
    topFiles: () => [...listing.top].sort(byCodeUnits),
    hasEntry: (p) => listing.byPath.has(p),
    entryProblem: (p) => listing.refused.find((r) => r.name === p || r.name.endsWith(`/${p}`))?.reason,
    folders: () => folders,
    filesIn: (folder) => listing.folders.get(folder) ?? [],
    sizeOf: (p) => entryOf(p).uncompressedSize,
    open,
    read: async (p) => bytesOf(await open(p)),
    async close() {
      if (isOpen) {
        isOpen = false
        zip.close()
      }
    },
  }
  return { archive, totalBytes: listing.totalBytes }
}
