import { messagesQuery, groupsQuery } from '../connectors/zulip/sql/queries.ts'
import { buildKeysetQuery, DIALECTS } from '../connectors/sql/dialect.ts'
const q = messagesQuery({ realm: 2, internal: 1 }, { topics: 'metadata', archivedMessages: process.argv[2] === 'read' ? 'read' : 'skip' })
const k = buildKeysetQuery(DIALECTS.postgres, { select: q.select, from: q.from, keys: q.keys, after: { id: 15000 }, limit: 5001 })
console.log(k.sql.replace('$1', '15000'))
