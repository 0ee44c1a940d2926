/**
 * The read-only view of an export archive (`ExportArchive`) and its caps (`ArchiveLimits`): what
 * archive.ts opens and the two kinds of archive (zip.ts, folder.ts) implement, here so that the
 * kinds need not import the file that chooses between them.
 */
import type { RefusedEntry } from './entries.ts'

export interface ExportArchive {
  /** What to call the export in messages: its path. */
  readonly label: string
  /** The newest modification time of the export (the ZIP file, or the folder's top-level files), epoch ms. */
  readonly modifiedAt: number
  /** The caps it is read with. */
  readonly limits: ArchiveLimits
  /** Entries that are never read, with the reason: each is a problem of a read. */
  readonly refused: readonly RefusedEntry[]
  /** True when the export has this top-level file. */
  hasFile(name: string): boolean
  /** The top-level files, sorted (the Sendbird connector reads every data file it finds). */
  topFiles(): readonly string[]
  /**
   * True when the export holds a readable file at this path, at any depth (`__uploads/F1/a.png`,
   * `general/attachments/F1-a.png`: the files some export tools put beside the day files). A name
   * that climbs out, is absolute, or passes through a symbolic link is never one.
   */
  hasEntry(path: string): boolean
  /** Why the export's entry at `path` is never read (a symbolic link, …), or undefined when it is readable or absent. */
  entryProblem(path: string): string | undefined
  /** The top-level folders, sorted. */
  folders(): readonly string[]
  /** The files directly in a top-level folder, sorted. */
  filesIn(folder: string): readonly string[]
  /** A file's inflated size as listed (declared by the ZIP; checked again while reading). */
  sizeOf(path: string): number
  /**
   * The bytes of one file (`folder/name` or a top-level name), streamed, from byte `offset` (a
   * ZIP entry is still inflated and checked from its start; the bytes before `offset` are
   * dropped). A file that cannot be read for good (over a cap, corrupt) fails the iteration with
   * an EntryUnreadable.
   */
  open(path: string, offset?: number): Promise<AsyncIterable<Buffer>>
  /** The bytes of one file at once (small files only: the caller checks {@link sizeOf}). */
  read(path: string): Promise<Buffer>
  close(): Promise<void>
}

export interface ArchiveLimits {
  /** Most inflated bytes of one file. */
  readonly maxEntryBytes: number
  /** Most inflated bytes of all files together. */
  readonly maxArchiveBytes: number
  /** Most bytes of one element of a JSON array file (the readers' cap; memory is bounded by it). */
  readonly maxElementBytes: number
}
