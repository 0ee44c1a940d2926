/**
 * An in-process S3-compatible server (s3rver) holding a legacy server's file bucket, for the
 * connectors' S3-backed file readers: start it, put objects, read them through the connector,
 * stop it. (files-core's store tests have their own helper for the customer's store; this one
 * only plays the *source* side.)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver'

export interface SourceBucket {
  readonly endpoint: string
  readonly bucket: string
  /** The settings a connector's `source.files` takes for this bucket (s3rver's fixed credentials). */
  readonly settings: {
    kind: 's3'
    bucket: string
    endpoint: string
    region: string
    forcePathStyle: true
    accessKeyId: string
    secretAccessKey: string
    prefix?: string
  }
  put(key: string, body: Uint8Array | string): Promise<void>
  stop(): Promise<void>
}

/** Starts s3rver on a free loopback port with one empty bucket. */
export async function startSourceBucket(bucket = 'legacy-files'): Promise<SourceBucket> {
  const directory = mkdtempSync(join(tmpdir(), 'cf-src-s3-'))
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] })
  const address = (await server.run()) as AddressInfo
  const endpoint = `http://127.0.0.1:${address.port}`
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials })
  return {
    endpoint,
    bucket,
    settings: { kind: 's3', bucket, endpoint, region: 'us-east-1', forcePathStyle: true, ...credentials },
    async put(key, body) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }))
    },
    async stop() {
      client.destroy()
      await server.close()
      rmSync(directory, { recursive: true, force: true })
    },
  }
}
