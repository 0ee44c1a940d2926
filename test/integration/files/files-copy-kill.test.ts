/**
 * A process killed (SIGKILL) while copying a file, then the copy run again — as the files lane
 * reruns after a crash: killed in the middle of the download, the rerun resumes the `.part` with a
 * Range and sends only the rest; killed in the middle of a multipart upload, the rerun does not
 * download again and completes one upload. Either way the store's own request log shows the key
 * written exactly once, and the stored bytes hash to the source's.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { FilesSchema, type FileStoreConfig } from '../../../src/files/config.ts'
import { copyFile, spoolPath } from '../../../src/files/copy/copy-file.ts'
import type { FileToCopy } from '../../../src/files/copy/copy-outcome.ts'
import { createHostPacer } from '../../../src/files/pace/host-pacer.ts'
import { createHttpReader } from '../../../src/files/read/http-reader.ts'
import { openFileStore } from '../../../src/files/store/open-store.ts'
import type { CopyChildSettings } from '../../helpers/copy-file-child.ts'
import { type FileHost, startFileHost } from '../../helpers/file-host.ts'
import { type S3TestServer, startS3Server } from '../../helpers/s3-server.ts'

const MIB = 1024 * 1024
let host: FileHost
let s3: S3TestServer
let storeConfig: FileStoreConfig

beforeAll(async () => {
  host = await startFileHost()
  s3 = await startS3Server(['files'])
  storeConfig = FilesSchema.parse({
    mode: 'rehost',
    store: {
      kind: 's3',
      bucket: 'files',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      publicBaseUrl: s3.publicBase('files'),
      multipartThresholdBytes: 5 * MIB,
    },
  }).store!
})
afterAll(async () => {
  await s3.close()
  await host.close()
})

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')

function startChild(settings: CopyChildSettings): ChildProcess {
  return spawn(process.execPath, [join(import.meta.dirname, '../../helpers/copy-file-child.ts')], {
    env: { ...process.env, CF_COPY_CHILD: JSON.stringify(settings) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
}

async function until(what: string, ok: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!ok()) {
    if (Date.now() > end) {
      throw new Error(`timed out waiting for ${what}`)
    }
    await sleep(20)
  }
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
}

/** The rerun, in this process. */
async function copyAgain(file: FileToCopy, spoolDir: string) {
  const store = openFileStore(storeConfig, { client: { maxAttempts: 1 } })
  try {
    return await copyFile(file, {
      reader: createHttpReader(),
      store,
      spoolDir,
      limits: { maxBytes: 1024 ** 3, stallTimeoutMs: 10_000, attempts: 2, memoryBytes: 0 },
      pacer: createHostPacer({ perHost: { concurrency: 1, requestsPerSecond: 100 } }),
    })
  } finally {
    await store.close?.()
  }
}

function fileAt(path: string, id: string): FileToCopy {
  const url = new URL(host.url(path))
  return { id, locator: { reader: 'http', ref: url.toString(), host: url.host }, name: path.split('/').pop()! }
}

describe('copyFile killed and run again', () => {
  it('killed during the download: the rerun resumes the part with a Range and the key is written once', async () => {
    const body = randomBytes(12 * MIB)
    // The first answer stops sending at 5 MiB (and never ends): the child is killed there.
    host.files.set('/kill/download.bin', { body, stallAt: 5 * MIB })
    const spoolDir = mkdtempSync(join(tmpdir(), 'cf-kill-spool-'))
    const file = fileAt('/kill/download.bin', 'killed-download')
    const child = startChild({ file, store: storeConfig, spoolDir, memoryBytes: 0 })
    const part = spoolPath(spoolDir, file.id)
    await until('5 MiB spooled', () => (statSync(part, { throwIfNoEntry: false })?.size ?? 0) >= 5 * MIB)
    await kill(child)
    const out = await copyAgain(file, spoolDir)
    expect(out).toMatchObject({ ok: true, bytes: body.length, sha256: sha(body), uploaded: true })
    const [, rerun] = host.requestsOf('/kill/download.bin')
    expect(rerun).toMatchObject({ range: `bytes=${5 * MIB}-`, status: 206, sent: body.length - 5 * MIB })
    if (!out.ok) {
      return
    }
    expect(s3.writesOf('files', out.storeKey)).toBe(1)
    const served = Buffer.from(await (await fetch(out.publicUrl)).arrayBuffer())
    expect(sha(served)).toBe(sha(body))
  })

  it('killed during a multipart upload: the rerun does not download again and completes one upload', async () => {
    const body = randomBytes(20 * MIB)
    host.files.set('/kill/upload.bin', { body })
    const spoolDir = mkdtempSync(join(tmpdir(), 'cf-kill-spool-'))
    const file = fileAt('/kill/upload.bin', 'killed-upload')
    // The second part never gets an answer: the child waits there until it is killed.
    s3.hold = (method, _key, query) => method === 'PUT' && query.partNumber === '2'
    const heldBefore = s3.held
    const child = startChild({ file, store: storeConfig, spoolDir, memoryBytes: 0 })
    try {
      await until('a part upload held', () => s3.held > heldBefore)
      await kill(child)
    } finally {
      s3.hold = undefined
    }
    const key = `sha256/${sha(body).slice(0, 2)}/${sha(body)}.bin`
    expect(s3.writesOf('files', key)).toBe(0)
    const out = await copyAgain(file, spoolDir)
    expect(out).toMatchObject({ ok: true, bytes: body.length, sha256: sha(body), storeKey: key, uploaded: true })
    expect(host.requestsOf('/kill/upload.bin').map((r) => [r.status, r.sent])).toEqual([
      [200, body.length],
      [416, 0],
    ])
    expect(s3.writesOf('files', key)).toBe(1)
    const served = Buffer.from(await (await fetch(s3.publicBase('files') + '/' + key)).arrayBuffer())
    expect(sha(served)).toBe(sha(body))
  })
})
