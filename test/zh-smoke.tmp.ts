import { loadZulipFixture } from './fixtures/zulip/load.ts'
import { createZulipConnector, ZulipConfigSchema } from '../connectors/zulip/index.ts'
const url = 'postgres://postgres@127.0.0.1:5432/zulip_scratch_zh'
if (process.argv[2] === 'load') await loadZulipFixture(url)
const topics = (process.argv[3] ?? 'metadata') as 'metadata'
const c = createZulipConnector(ZulipConfigSchema.parse({ connector: 'zulip', url, realm: 'acme', topics, archivedMessages: process.argv[4] ?? 'skip', pageSize: 3 }))
const s = await c.open()
for (const e of ['users', 'groups', 'members', 'messages'] as const) {
  let n = 0
  for await (const p of s.read(e)) for (const r of p.rows) { n++; console.log(e, JSON.stringify(r)) }
  console.log(e, 'count', await s.count(e), 'read', n)
}
await s.close()
