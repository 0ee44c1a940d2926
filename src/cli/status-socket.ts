/**
 * `status` (and the dashboard) while a run holds the embedded store. PGlite is one database in one
 * process: a second PGlite on the same directory would corrupt it, so every other command waits
 * for the holder to finish (or the ledger is a Postgres server, `state.url`, which serves many
 * processes). The holder answers one question only, on a Unix socket next to its lock: a
 * {@link StatusRequest} in, the job's {@link StatusReadings} out, one JSON line each, then it
 * hangs up. The readings are read on the holder's one connection between its own queries, so they
 * never land inside one of its transactions, and nothing on the socket changes a row.
 */
import { createHash } from 'node:crypto'
import { chmodSync, rmSync } from 'node:fs'
import { createConnection, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import type { StatusReadings, StatusRequest } from './status-readings.ts'

/** The readings' fields that carry dates (JSON carries them as ISO strings). */
const DATE_FIELDS = new Set(['startedAt', 'heartbeatAt', 'finishedAt', 'updatedAt', 'settledAt'])
/** The most runs and rejected items one question may ask for (the dashboard asks 20 and 5000). */
const MAX_RUNS = 100
const MAX_REJECTS = 5000

/**
 * Where the holder of the embedded store in `dir` listens. A Unix socket path is limited to about
 * 100 bytes: a deeper directory gets a socket in the temporary directory named by its hash.
 */
export function statusSocketPath(dir: string): string {
  const beside = join(dir, 'chatferry.sock')
  if (Buffer.byteLength(beside) < 100) {
    return beside
  }
  return join(tmpdir(), `chatferry-${createHash('sha256').update(dir).digest('hex').slice(0, 16)}.sock`)
}

/** The request as sent, if it is one: a job id and two small counts. */
function requestOf(line: string): StatusRequest {
  const req = JSON.parse(line) as Partial<Record<keyof StatusRequest, unknown>>
  const count = (v: unknown, max: number) => (Number.isInteger(v) && (v as number) >= 0 && (v as number) <= max ? (v as number) : undefined)
  const runs = count(req.runs, MAX_RUNS)
  const rejects = count(req.rejects, MAX_REJECTS)
  if (typeof req.jobId !== 'string' || runs === undefined || rejects === undefined) {
    throw new Error('not a status request')
  }
  return { jobId: req.jobId, runs, rejects }
}

/** Answers status requests on `path` with `read` until the returned function is called. */
export async function serveStatusSocket(read: (req: StatusRequest) => Promise<StatusReadings>, path: string): Promise<() => Promise<void>> {
  rmSync(path, { force: true })
  const open = new Set<Socket>()
  const server = createServer((socket) => {
    open.add(socket)
    socket.on('close', () => open.delete(socket))
    socket.on('error', () => {})
    let line = ''
    const onData = (chunk: Buffer) => {
      line += chunk.toString('utf8')
      const end = line.indexOf('\n')
      if (end < 0) {
        return
      }
      socket.off('data', onData)
      void answer(line.slice(0, end)).then((text) => socket.end(`${text}\n`))
    }
    socket.on('data', onData)
  })
  const answer = async (line: string) => {
    try {
      return JSON.stringify({ ok: true, result: await read(requestOf(line)) })
    } catch (err) {
      return JSON.stringify({ ok: false, error: err instanceof Error ? err.message : String(err) })
    }
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(path, () => (server.off('error', reject), resolve()))
  })
  server.unref()
  // The ledger holds personal data: only the holder's user may ask.
  chmodSync(path, 0o600)
  return async () => {
    // A reader still connected must not keep the holder from ending: hang up on it.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    for (const socket of open) {
      socket.destroy()
    }
    await closed
    rmSync(path, { force: true })
  }
}

/** Asks the process holding the embedded store for the job's readings. */
export async function askStatus(path: string, req: StatusRequest): Promise<StatusReadings> {
  const text = await new Promise<string>((resolve, reject) => {
    const socket = createConnection(path)
    let got = ''
    socket.on('data', (chunk) => (got += chunk.toString('utf8')))
    socket.on('error', reject)
    socket.on('connect', () => socket.write(`${JSON.stringify(req)}\n`))
    socket.on('close', () =>
      got.endsWith('\n') ? resolve(got) : reject(new Error('the chatferry process holding the embedded store closed the connection')),
    )
  })
  const answer = JSON.parse(text, (k, v: unknown) => (DATE_FIELDS.has(k) && typeof v === 'string' ? new Date(v) : v)) as {
    ok: boolean
    result?: StatusReadings
    error?: string
  }
  if (!answer.ok || answer.result === undefined) {
    throw new Error(answer.error ?? 'the ledger could not be read')
  }
  return answer.result
}
