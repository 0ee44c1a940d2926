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

/** A JSON object column; a broken one is a problem on `field`. */
export function jsonObject(field: string, value: unknown, lossy: boolean): JsonObject | undefined {
  return decodeJson(field, value, 'object', lossy)
}

/**
 * The legacy user id of a comment or reaction actor: the uid for `users`, `<actorType>/<actorId>`
 * for every other kind (guests, e-mail guests, federated users, bots, bridged, cli, deleted_users…),
 * which the `missingUsers` policy turns into placeholder users.
 */
export function actorId(actorType: string, id: string): string {
  return actorType === 'users' ? id : `${actorType}/${id}`
}
