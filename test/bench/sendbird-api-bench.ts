/**
 * Sendbird Platform API read benchmark: the connector reads every entity of a generated
 * application from the emulator (test/fixtures/sendbird/emulator.ts, which answers 429 above
 * `--rps` requests in any second), paced at the same `--rps`. Prints pages (requests) per second
 * ÷ the rate limit (target ≥ 0.9: the read is bound by the source's documented limit, not by
 * chatferry), the 429s it drew (target 0), rows read and peak RSS.
 *
 *   node test/bench/sendbird-api-bench.ts [--rps 20] [--channels 20] [--messages-per-channel 2000]
 *   npm run bench -- sendbird-api --rps 60
 */
import { createConnector, SourceConfigSchema } from '../../connectors/index.ts'
import { LEGACY_ENTITIES } from '../../src/model/records.ts'
import { startSendbirdEmulator } from '../fixtures/sendbird/emulator.ts'
import { type Json, SB_TOKEN, type SendbirdSeed } from '../fixtures/sendbird/seed.ts'

const args = process.argv.slice(2)
const value = (name: string, d: number) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? d : Number(args[i + 1])
}
const rps = value('rps', 20)
const channels = value('channels', 20)
const perChannel = value('messages-per-channel', 2000)
const T0 = Date.UTC(2024, 0, 2)

function seed(): SendbirdSeed {
  const users: Json[] = Array.from({ length: 250 }, (_, i) => ({ user_id: `u${i}`, nickname: `User ${i}`, is_active: true, created_at: T0 / 1000 }))
  const list = Array.from({ length: channels }, (_, c) => ({
    open: false,
    members: Array.from({ length: 150 }, (_, j) => ({ user_id: `u${(c * 7 + j) % 250}`, role: j === 0 ? 'operator' : '' })),
    raw: { channel_url: `ch_${c}`, name: `Channel ${c}`, is_public: true, member_count: 150, created_at: T0 / 1000 },
  }))
  let id = 1
  const messages = list.flatMap((c, ci) =>
    Array.from({ length: perChannel }, (_, k) => ({
      channel: c.raw.channel_url,
      raw: {
        message_id: id++,
        type: 'MESG',
        channel_url: c.raw.channel_url,
        user: { user_id: `u${(ci + k) % 250}` },
        message: `message ${k} of channel ${ci}`,
        created_at: T0 + k * 1000,
        updated_at: 0,
        mentioned_users: [],
      },
    })),
  )
  return { users, channels: list, messages }
}

const emu = await startSendbirdEmulator(seed(), { perSecond: rps })
const source = createConnector(
  SourceConfigSchema.parse({
    connector: 'sendbird',
    pageSize: 1000,
    api: { appId: 'BENCH', apiToken: SB_TOKEN, baseUrl: emu.baseUrl, requestsPerSecond: rps },
  }),
)
const session = await source.open()
let peak = process.memoryUsage().rss
const started = performance.now()
const first = emu.log.length
let rows = 0
for (const entity of LEGACY_ENTITIES) {
  for await (const page of session.read(entity)) {
    rows += page.rows.length
    peak = Math.max(peak, process.memoryUsage().rss)
  }
}
const seconds = (performance.now() - started) / 1000
await session.close()
await emu.close()
const requests = emu.log.length - first
const limited = emu.log.filter((r) => r.status === 429).length
const ratio = requests / seconds / rps
process.stdout.write(
  `Sendbird Platform API (emulator at ${rps} requests/s): ${rows.toLocaleString('en')} rows in ${requests} requests, ${seconds.toFixed(1)} s = ` +
    `${(requests / seconds).toFixed(2)} pages/s | ratio to the limit ${ratio.toFixed(2)} (target ≥ 0.90) | 429s: ${limited} (target 0) | peak RSS ${Math.round(peak / 2 ** 20)} MB\n`,
)
process.exit(ratio >= 0.9 && limited === 0 ? 0 : 1)
