/**
 * Source file readers benchmark: one large file streamed through each connector's `files()`
 * reader — a local data directory (Mattermost), an S3 bucket (s3rver in process), a Slack export
 * ZIP (a deflated entry, read from an offset) and a Rocket.Chat GridFS bucket inside a mongodump
 * (255 KiB chunks) — each in its own child process, its peak RSS compared with the same process
 * before the read (target: within 100 MiB whatever the file size, as the files lane's own target: the readers stream) and its
 * throughput printed. The bytes are hashed as they arrive and the count checked.
 *
 *   node test/bench/source-files-bench.ts [--mib 512] [--only local,s3,zip,gridfs]
 *   npm run bench -- source-files
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'

import { serialize } from 'bson'

import { s3ObjectReader } from '../../connectors/files/s3-reader.ts'
import { MattermostConfigSchema } from '../../connectors/mattermost/config.ts'
import { createMattermostConnector } from '../../connectors/mattermost/index.ts'
import { rocketChatFilesReader } from '../../connectors/rocketchat/files/files-reader.ts'
import { SlackExportConfigSchema } from '../../connectors/slack-export/config.ts'
import { slackFilesReader } from '../../connectors/slack-export/files-reader.ts'
import type { FileReader } from '../../src/model/files.ts'
import { writeExportZip } from '../fixtures/slack-export/generate.ts'
import { startSourceBucket } from '../helpers/source-bucket.ts'

const args = process.argv.slice(2)
const value = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const MIB = 1024 * 1024
const SIZE = Number(value('mib') ?? 512) * MIB
/** The issue's target for the files lane: a large file costs at most 100 MB of RSS. */
const LIMIT = 100 * MIB
const KINDS = ['local', 's3', 'zip', 'gridfs'] as const
type Kind = (typeof KINDS)[number]

/** Streams `ref` through `reader`, sampling RSS; returns bytes, ms and the peak growth. */
async function measure(reader: FileReader, ref: string, offset: number): Promise<{ bytes: number; ms: number; growth: number }> {
  const before = process.memoryUsage().rss
  let peak = before
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10)
  const t0 = performance.now()
  const f = await reader.open(ref, { offset })
  const hash = createHash('sha256')
  let bytes = 0
  for await (const chunk of f.body as Readable) {
    hash.update(chunk as Buffer)
    bytes += (chunk as Buffer).length
  }
  hash.digest()
  clearInterval(timer)
  peak = Math.max(peak, process.memoryUsage().rss)
  await reader.close?.()
  return { bytes, ms: performance.now() - t0, growth: peak - before }
}

/** Writes `size` bytes to `path` in 1 MiB blocks (never the whole file in memory). */
function writeBig(path: string, size: number): void {
  const fd = openSync(path, 'w')
  const block = Buffer.alloc(MIB, 0x5a)
  for (let at = 0; at < size; at += MIB) {
    writeSync(fd, block, 0, Math.min(MIB, size - at))
  }
  closeSync(fd)
}

async function child(kind: Kind, dir: string): Promise<void> {
  let reader: FileReader
  let ref: string
  let offset = 0
  let stop = async () => {}
  switch (kind) {
    case 'local': {
      const data = join(dir, 'mm-data')
      mkdirSync(join(data, '20240101/teams/t/channels/c/users/u/f'), { recursive: true })
      writeBig(join(data, '20240101/teams/t/channels/c/users/u/f/big.bin'), SIZE)
      const c = createMattermostConnector(
        MattermostConfigSchema.parse({ connector: 'mattermost', url: 'postgres://x@127.0.0.1/x', files: { kind: 'local', directory: data } }),
      )
      reader = c.files!()
      ref = '20240101/teams/t/channels/c/users/u/f/big.bin'
      break
    }
    case 's3': {
      const bucket = await startSourceBucket('bench-source')
      const path = join(dir, 's3-big.bin')
      writeBig(path, SIZE)
      const { createReadStream } = await import('node:fs')
      const { PutObjectCommand, S3Client } = await import('@aws-sdk/client-s3')
      const client = new S3Client({
        region: 'us-east-1',
        endpoint: bucket.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: bucket.settings.accessKeyId, secretAccessKey: bucket.settings.secretAccessKey },
        // A streamed body otherwise goes aws-chunked with a trailing checksum, which s3rver stores as it is.
        requestChecksumCalculation: 'WHEN_REQUIRED',
      })
      await client.send(new PutObjectCommand({ Bucket: bucket.bucket, Key: 'big.bin', Body: createReadStream(path), ContentLength: SIZE }))
      client.destroy()
      reader = s3ObjectReader({ ...bucket.settings, prefix: '' })
      ref = 'big.bin'
      stop = () => bucket.stop()
      break
    }
    case 'zip': {
      const zip = await writeExportZip(
        join(dir, 'export.zip'),
        [
          ['users.json', '[]'],
          ['channels.json', '[]'],
          ['__uploads/F1/big.bin', Buffer.alloc(SIZE, 0x5a)],
        ],
        { level: 1 },
      )
      reader = slackFilesReader(SlackExportConfigSchema.parse({ connector: 'slack-export', path: zip }))
      ref = '__uploads/F1/big.bin'
      offset = Math.floor(SIZE / 3)
      break
    }
    case 'gridfs': {
      const chunk = 255 * 1024
      const block = Buffer.alloc(chunk, 0x5a)
      writeFileSync(join(dir, 'rocketchat_uploads.bson'), serialize({ _id: 'big', store: 'GridFS:Uploads' }))
      writeFileSync(join(dir, 'rocketchat_uploads.files.bson'), serialize({ _id: 'big', length: SIZE, chunkSize: chunk }))
      const fd = openSync(join(dir, 'rocketchat_uploads.chunks.bson'), 'w')
      for (let n = 0; n * chunk < SIZE; n++) {
        writeSync(fd, serialize({ _id: `c${n}`, files_id: 'big', n, data: block.subarray(0, Math.min(chunk, SIZE - n * chunk)) }))
      }
      closeSync(fd)
      reader = rocketChatFilesReader(dir, {})
      ref = 'big'
      break
    }
  }
  globalThis.gc?.()
  const r = await measure(reader, ref, offset)
  await stop()
  const ok = r.bytes === SIZE - offset && r.growth <= LIMIT
  process.stdout.write(
    `${kind.padEnd(7)} ${(r.bytes / MIB).toFixed(0)} MiB in ${(r.ms / 1000).toFixed(2)} s (${(r.bytes / MIB / (r.ms / 1000)).toFixed(0)} MiB/s), peak RSS +${(r.growth / MIB).toFixed(1)} MiB${ok ? '' : `  FAIL (${r.bytes} bytes of ${SIZE - offset})`}\n`,
  )
  process.exit(ok ? 0 : 1)
}

const childKind = value('child') as Kind | undefined
if (childKind !== undefined) {
  await child(childKind, value('dir') as string)
} else {
  const only = (value('only')?.split(',') ?? KINDS) as Kind[]
  process.stdout.write(`one ${SIZE / MIB} MiB file per reader; target: peak RSS within ${LIMIT / MIB} MiB of before the read\n`)
  let failed = 0
  for (const kind of only) {
    const dir = mkdtempSync(join(tmpdir(), `cf-bench-source-files-${kind}-`))
    const r = spawnSync(process.execPath, ['--expose-gc', import.meta.filename, '--child', kind, '--dir', dir, '--mib', String(SIZE / MIB)], {
      stdio: 'inherit',
    })
    rmSync(dir, { recursive: true, force: true })
    failed += r.status === 0 ? 0 : 1
  }
  process.exit(failed > 0 ? 1 : 0)
}
