/**
 * API readers against their emulators: how close a full message read comes to the pace it is
 * allowed (issue 30's target: pages per second ÷ the limit ≥ 0.9). Stream Chat: the channel query
 * (messages, 300 a page) limited to `--stream-per-minute` (default 600); Twilio Conversations:
 * `--twilio-per-second` (default 20), 100 messages a page. Both emulators answer at once, so the
 * pace is the reader's own.
 *
 *   npm run bench -- source-api-pace [--messages 30000]
 */
import { createConnector, SourceConfigSchema } from '../../connectors/index.ts'
import { startStreamEmulator } from '../fixtures/stream-chat/emulator.ts'
import { largeStreamSeed } from '../fixtures/stream-chat/seed.ts'
import { startTwilioEmulator } from '../fixtures/twilio-conversations/emulator.ts'
import { largeTwilioSeed } from '../fixtures/twilio-conversations/seed.ts'

const value = (name: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? undefined : process.argv[i + 1]
}
const messages = Number(value('messages') ?? 30_000)
const streamPerMinute = Number(value('stream-per-minute') ?? 600)
const twilioPerSecond = Number(value('twilio-per-second') ?? 20)

/** Reads every message; `opened` runs once the source is open (its directory listed), before the read. */
async function readMessages(config: Record<string, unknown>, opened: () => void = () => undefined): Promise<{ rows: number; ms: number }> {
  const s = await createConnector(SourceConfigSchema.parse(config)).open()
  opened()
  const started = performance.now()
  let rows = 0
  try {
    for await (const p of s.read('messages', { pageSize: 1000 })) {
      rows += p.rows.length
    }
  } finally {
    await s.close()
  }
  return { rows, ms: performance.now() - started }
}

process.env.CF_BENCH_STREAM_KEY = 'benchkey'
process.env.CF_BENCH_STREAM_SECRET = 'bench-secret'
// No threads: every request of the read is a channel query, the one limit measured.
const stream = await startStreamEmulator(largeStreamSeed(messages, { threads: false }), { apiKey: 'benchkey', secret: 'bench-secret' })
try {
  const r = await readMessages({
    connector: 'stream-chat',
    api: {
      baseUrl: stream.url,
      keyEnv: 'CF_BENCH_STREAM_KEY',
      secretEnv: 'CF_BENCH_STREAM_SECRET',
      limits: { getChannel: streamPerMinute, getReplies: 60_000 },
    },
  })
  const pages = stream.served.get('getChannel') ?? 0
  const perSecond = pages / (r.ms / 1000)
  const allowed = streamPerMinute / 60
  process.stdout.write(
    `Stream Chat: ${r.rows.toLocaleString('en-US')} messages, ${pages} channel-query pages in ${(r.ms / 1000).toFixed(1)} s = ${perSecond.toFixed(2)} pages/s against ${allowed.toFixed(2)} allowed: ratio ${(perSecond / allowed).toFixed(2)} (target ≥ 0.90)\n`,
  )
} finally {
  await stream.close()
}

process.env.CF_BENCH_TWILIO_SID = `AC${'0'.repeat(32)}`
process.env.CF_BENCH_TWILIO_TOKEN = 'bench-token'
const twilio = await startTwilioEmulator(largeTwilioSeed(messages), { accountSid: process.env.CF_BENCH_TWILIO_SID, authToken: 'bench-token' })
try {
  let before = 0
  const r = await readMessages(
    {
      connector: 'twilio-conversations',
      baseUrl: twilio.url,
      mediaBaseUrl: twilio.url,
      accountSidEnv: 'CF_BENCH_TWILIO_SID',
      authTokenEnv: 'CF_BENCH_TWILIO_TOKEN',
      requestsPerSecond: twilioPerSecond,
    },
    () => {
      before = twilio.statuses.get(200) ?? 0
    },
  )
  const pages = (twilio.statuses.get(200) ?? 0) - before
  const perSecond = pages / (r.ms / 1000)
  process.stdout.write(
    `Twilio Conversations: ${r.rows.toLocaleString('en-US')} messages, ${pages} message pages in ${(r.ms / 1000).toFixed(1)} s = ${perSecond.toFixed(2)} pages/s against ${twilioPerSecond} allowed: ratio ${(perSecond / twilioPerSecond).toFixed(2)} (target ≥ 0.90)\n`,
  )
} finally {
  await twilio.close()
}
