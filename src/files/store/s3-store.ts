/**
 * The S3-compatible store: AWS S3, Cloudflare R2, MinIO, Google Cloud Storage's interoperability
 * endpoint, Backblaze B2, Wasabi, Ceph … through the AWS SDK for JavaScript v3.
 *
 * - Credentials from `files.store` when both keys are set, else the SDK's default chain
 *   (environment, shared config/profile, container/instance roles).
 * - `endpoint` + `forcePathStyle` for servers that are not AWS (MinIO and most self-hosted ones
 *   need path-style: `endpoint/bucket/key`).
 * - Checksums `WHEN_REQUIRED` both ways. Since early 2025 the SDK computes a CRC32 checksum of
 *   every upload by default and sends it as an `aws-chunked` trailer, and validates checksums on
 *   downloads; many S3-compatible servers (older MinIO, R2 at first, GCS interop, Ceph, s3rver)
 *   reject or mis-store such uploads. `WHEN_REQUIRED` restores the long-standing behaviour every
 *   server accepts. Integrity does not depend on it: the files lane hashes every file itself
 *   (SHA-256, stored as the object's `x-amz-meta-sha256` and in the ledger).
 * - `put`: one PutObject below `multipartThresholdBytes`, else a multipart upload (lib-storage's
 *   `Upload`, parts of 8 MiB or more, four at a time: about 32 MiB of buffers whatever the size);
 *   failed multipart uploads are aborted so no orphaned parts stay billed.
 * - `publicUrl` is `publicBaseUrl` + prefix + key: never a presigned URL.
 * - `check()` writes, reads back and deletes a probe object (`<prefix>.chatferry-check`) and asks
 *   for a key that does not exist (which answers 404 only with s3:ListBucket; without it, 403 and
 *   deduplication could not work). Failures become a configuration error naming the store and
 *   the cause; during copying, failures are {@link StoreUnavailableError}s.
 */
import { createReadStream } from 'node:fs'
import { createRequire } from 'node:module'

import type * as S3 from '@aws-sdk/client-s3'
import type { S3ClientConfig } from '@aws-sdk/client-s3'
import type * as S3Storage from '@aws-sdk/lib-storage'

import type { FileStore, PutMeta, StoredObject } from '../../model/files.ts'
import type { FileStoreConfig } from '../config.ts'
import { shownUrl } from '../read/shown-url.ts'
import { normalisePrefix, publicUrlOf } from './public-url.ts'
import { explainS3Error } from './s3-errors.ts'
import { storeConfigError, StoreUnavailableError } from './store-errors.ts'

export type S3StoreConfig = Extract<FileStoreConfig, { kind: 's3' }>

const MIB = 1024 * 1024
/** S3 allows at most 10,000 parts; parts grow past 8 MiB for files over about 78 GiB. */
const MAX_PARTS = 10_000
const PROBE_BODY = 'chatferry checks that it can write, read and delete in this store\n'

const ignore = (): void => undefined
const SILENT = { trace: ignore, debug: ignore, info: ignore, warn: ignore, error: ignore }

export interface S3StoreOptions {
  /** Extra SDK client settings (tests: `maxAttempts`). */
  readonly client?: Partial<S3ClientConfig>
}

export function openS3Store(config: S3StoreConfig, options: S3StoreOptions = {}): FileStore {
  // Required here, not imported: the SDK costs over half a second of CPU that a run without an S3 store never needs.
  const require = createRequire(import.meta.url)
  const { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } = require('@aws-sdk/client-s3') as typeof S3
  const { Upload } = require('@aws-sdk/lib-storage') as typeof S3Storage
  const prefix = normalisePrefix(config.prefix)
  const client = new S3Client({
    region: config.region,
    forcePathStyle: config.forcePathStyle,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // The SDK would warn on the console about failed streaming requests; failures reach the lane as errors.
    logger: SILENT,
    ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
    ...(config.accessKeyId !== undefined && config.secretAccessKey !== undefined
      ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }
      : {}),
    ...options.client,
  })
  const description = `s3://${config.bucket}/${prefix} at ${config.endpoint === undefined ? `AWS S3 (${config.region})` : shownUrl(config.endpoint)}`
  const Bucket = config.bucket
  const unavailable = (err: unknown, what: string) =>
    new StoreUnavailableError(description, `${what}: ${explainS3Error(err).message}`, { cause: err })

  const stat = async (key: string, signal?: AbortSignal): Promise<StoredObject | undefined> => {
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket, Key: prefix + key }), signal ? { abortSignal: signal } : {})
      return { size: head.ContentLength ?? 0 }
    } catch (err) {
      if (isNotFound(err)) {
        return undefined
      }
      throw signal?.aborted ? err : unavailable(err, `looking up ${key}`)
    }
  }

  const put = async (key: string, source: string | Uint8Array, meta: PutMeta, signal?: AbortSignal): Promise<void> => {
    // 1 MiB reads of the spool file: 8 per multipart part instead of 128 (fewer reads and chunks to join).
    const body = () => (typeof source === 'string' ? createReadStream(source, { highWaterMark: MIB }) : source)
    const params = { Bucket, Key: prefix + key, ContentType: meta.contentType, Metadata: { sha256: meta.sha256 } }
    try {
      if (meta.size < config.multipartThresholdBytes) {
        await client.send(new PutObjectCommand({ ...params, Body: body(), ContentLength: meta.size }), signal ? { abortSignal: signal } : {})
        return
      }
      const upload = new Upload({
        client,
        params: { ...params, Body: body() },
        partSize: Math.max(8 * MIB, Math.ceil(meta.size / MAX_PARTS)),
        queueSize: 4,
        leavePartsOnError: false,
      })
      const abort = () => void upload.abort()
      signal?.addEventListener('abort', abort, { once: true })
      try {
        await upload.done()
      } finally {
        signal?.removeEventListener('abort', abort)
      }
    } catch (err) {
      throw signal?.aborted ? err : unavailable(err, `writing ${key}`)
    }
  }

  const check = async (signal?: AbortSignal): Promise<void> => {
    const Key = `${prefix}.chatferry-check`
    const opts = signal ? { abortSignal: signal } : {}
    const step = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
      try {
        return await run()
      } catch (err) {
        if (signal?.aborted) {
          throw err
        }
        throw storeConfigError(description, `${what}: ${explainS3Error(err).message}`)
      }
    }
    await step('writing a probe object', () => client.send(new PutObjectCommand({ Bucket, Key, Body: PROBE_BODY, ContentType: 'text/plain' }), opts))
    const read = await step('reading the probe object back', async () => {
      const got = await client.send(new GetObjectCommand({ Bucket, Key }), opts)
      return got.Body?.transformToString()
    })
    if (read !== PROBE_BODY) {
      throw storeConfigError(description, 'the probe object read back differs from what was written')
    }
    await step('looking up a key that does not exist (needs s3:ListBucket)', async () => {
      try {
        await client.send(new HeadObjectCommand({ Bucket, Key: `${Key}-absent` }), opts)
      } catch (err) {
        if (!isNotFound(err)) {
          throw err
        }
      }
    })
    // Best effort: without s3:DeleteObject the (one, overwritten) probe object stays.
    await client.send(new DeleteObjectCommand({ Bucket, Key }), opts).catch(() => undefined)
  }

  return {
    description,
    check,
    stat,
    put,
    publicUrl: (key) => publicUrlOf(config.publicBaseUrl, prefix + key),
    close: () => {
      client.destroy()
      return Promise.resolve()
    },
  }
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: unknown; $metadata?: { httpStatusCode?: unknown } }
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404
}
