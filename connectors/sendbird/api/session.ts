/**
 * One read of a Sendbird application over the Platform API: the shared live-API session
 * (`connectors/rows/api-session.ts`) over Sendbird's listings (rows.ts). The API has no snapshot:
 * each list is read as it is when its page is asked (a message sent during the read may or may
 * not be seen; the next delta reads it). Counting reads the entity through, so `plan` reads each
 * entity twice; counts are kept for the session. Only messages can count their changes (by their
 * creation time, the list's `message_ts`): the other lists have no change time the API lists by.
 */
import type { LegacyEntity, LegacyRecordOf } from '../../../src/model/records.ts'
import { type ApiRowsOptions, ApiSession } from '../../rows/api-session.ts'
import type { PositionedRow } from '../../rows/pages.ts'
import type { SendbirdClient } from './client.ts'
import { type ApiRead, groupRows, memberRows, messageRows, userRows } from './rows.ts'

function rows(client: SendbirdClient, entity: LegacyEntity, o: ApiRowsOptions): AsyncGenerator<PositionedRow<LegacyRecordOf[LegacyEntity]>[]> {
  const r: ApiRead = { client, ...o }
  switch (entity) {
    case 'users':
      return userRows(r)
    case 'groups':
      return groupRows(r)
    case 'members':
      return memberRows(r)
    case 'messages':
      return messageRows(r)
  }
}

export function sendbirdApiSession(client: SendbirdClient, pageSize: number): ApiSession {
  return new ApiSession({
    rows: (entity, o) => rows(client, entity, o),
    pageSize,
    countsChanges: (entity) => entity === 'messages',
    close: () => {},
  })
}
