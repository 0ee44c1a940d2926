/** `status`'s line about the files lane (issue 27): files by state, bytes copied, messages waiting on files. */
import type { FileCounts } from '../state/index.ts'

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`
}

export function formatStatusFiles(f: FileCounts): string {
  const waiting = f.waitingMessages > 0 ? `; ${f.waitingMessages} message(s) waiting on files` : ''
  const failed = f.failed > 0 ? ` (${f.failedWaiting} held under files.onFailure wait; chatferry files failures lists them)` : ''
  return (
    `files: ${f.copied} copied (${mib(f.copiedBytes)}), ${f.planned} to copy${f.plannedBytes > 0 ? ` (${mib(f.plannedBytes)} known)` : ''}, ` +
    `${f.failed} failed${failed}, ${f.skipped} skipped${waiting}`
  )
}
