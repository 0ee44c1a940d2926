/**
 * Twilio Conversations' `conversationState` outcomes (connectors/twilio-conversations/rows.ts):
 * a closed conversation counts `closed-archived`, an inactive one `inactive-kept` — only when the
 * conversation decodes; one rejected for its own reason (here an unreadable `date_created`) is
 * neither archived nor kept, and its problem row carries no outcome.
 */
import { expect, it } from 'vitest'

import type { RowsSource } from '../../../../connectors/twilio-conversations/rows.ts'
import { groupRows } from '../../../../connectors/twilio-conversations/rows.ts'

const conversation = (sid: string, state: string, dateCreated = '2026-01-02T03:04:05Z') => ({
  serviceSid: 'IS1',
  value: { sid, state, chat_service_sid: 'IS1', friendly_name: sid, date_created: dateCreated, date_updated: dateCreated },
  participants: [],
})

it('a conversation that does not decode counts no state outcome', async () => {
  const src = {
    conversations: [
      conversation('CH1', 'closed'),
      conversation('CH2', 'closed', 'not a time'),
      conversation('CH3', 'inactive'),
      conversation('CH4', 'active'),
    ],
  } as unknown as RowsSource
  const rows = []
  for await (const r of groupRows(src, {})) {
    rows.push(r.row)
  }
  expect(rows.map((r) => [r.ok ? r.record.id : r.legacyId, r.ok, r.outcomes ?? []])).toEqual([
    ['CH1', true, [{ policy: 'conversationState', outcome: 'closed-archived' }]],
    ['CH2', false, []],
    ['CH3', true, [{ policy: 'conversationState', outcome: 'inactive-kept' }]],
    ['CH4', true, []],
  ])
})
