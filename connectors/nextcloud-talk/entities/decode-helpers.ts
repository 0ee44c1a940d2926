/** Value decoders specific to Nextcloud's storage conventions. */
import type { EpochMs, JsonObject } from '../../../src/model/records.ts'
import { decodeJson, decodeTimestamp } from '../../sql/decode.ts'

/** A Nextcloud `datetime` column (UTC, whole seconds); NULL → undefined. */
export function ncTime(field: string, value: unknown): EpochMs | undefined {
  return decodeTimestamp(field, value, 'iso')
}

/** Unix seconds as Nextcloud stores them in integers and JSON (`lastLogin`, `deleted_on`, `last_edited_time`); 0 → undefined. */
export function unixSeconds(field: string, value: unknown): EpochMs | undefined {
  if (value === null || value === undefined || value === '' || value === 0 || value === '0') {
    return undefined
  }
  return decodeTimestamp(field, value, 'epoch-s')
}

/**
 * A JSON object column written by PHP's `json_encode`; a broken one is a problem on `field`. PHP
 * encodes an empty associative array as `[]`, so an empty JSON array is an empty object here
 * (Talk writes `meta_data` `[]` for messages without metadata, e.g. every non-moderator message
 * in a room where only moderators may mention everyone).
 */
export function jsonObject(field: string, value: unknown, lossy: boolean): JsonObject | undefined {
  if (typeof value === 'string' && value.length < 8 && value.trim() === '[]') {
    return {}
  }
  try {
    return decodeJson(field, value, 'object', lossy)
  } catch (err) {
    // A parsed empty array (a JSON column the driver decodes): the same empty PHP array.
    if (Array.isArray(value) && value.length === 0) {
      return {}
    }
    throw err
  }
}

/**
 * The legacy user id of a comment or reaction actor: the uid for `users`, `<actorType>/<actorId>`
 * for every other kind (guests, e-mail guests, federated users, bots, bridged, cli, deleted_users…),
 * which the `missingUsers` policy turns into placeholder users.
 */
export function actorId(actorType: string, id: string): string {
  return actorType === 'users' ? id : `${actorType}/${id}`
}
