/** Value decoders specific to Mattermost's storage conventions. */
import type { EpochMs } from '../../../src/model/records.ts'
import { decodeTimestamp, FieldProblem } from '../../sql/decode.ts'

/** A Mattermost time column: epoch ms, where 0 (or NULL) means "never". */
export function mmTime(field: string, value: unknown): EpochMs | undefined {
  if (value === null || value === undefined || value === 0 || value === '0') {
    return undefined
  }
  return decodeTimestamp(field, value, 'epoch-ms')
}

/** A required Mattermost time column (a creation time). */
export function mmRequiredTime(field: string, value: unknown): EpochMs {
  const t = mmTime(field, value)
  if (t === undefined) {
    throw new FieldProblem(field, 'invalid timestamp: 0 or NULL')
  }
  return t
}

/** Mattermost's space-separated role lists (`system_user system_admin`). */
export function roleList(value: unknown): string[] {
  return typeof value === 'string' ? value.split(/\s+/).filter((r) => r !== '') : []
}
