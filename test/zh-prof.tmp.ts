import { createZulipConnector, ZulipConfigSchema } from '../connectors/zulip/index.ts'
const url = 'postgres://postgres@127.0.0.1:5432/cf_bench_zulip_20000'
const c = createZulipConnector(ZulipConfigSchema.parse({ connector: 'zulip', url, realm: 'acme', pageSize: 5000 }))
const s = await c.open()
const t = performance.now()
let n = 0
for await (const p of s.read('messages')) n += p.rows.length
console.log('read', n, (performance.now() - t).toFixed(0), 'ms')
await s.close()
