/**
 * A legacy server's file bucket for the connectors' S3-backed file readers: the in-process
 * S3-compatible server of the store tests (s3-server.ts: s3rver behind a SigV4-checking front,
 * with its marked test secret) with one bucket, the settings a connector's `source.files` takes
 * for it, and a way to put objects. It plays the *source* side only.
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3'

import { type S3TestServer, startS3Server } from './s3-server.ts'

export interface SourceBucket {
  readonly endpoint: string
  readonly bucket: string
  readonly server: S3TestServer
  /** The settings a connector's `source.files` takes for this bucket. */
  readonly settings: {
    kind: 's3'
    bucket: string
    endpoint: string
    region: string
    forcePathStyle: true
    accessKeyId: string
    secretAccessKey: string
  }
  put(key: string, body: Uint8Array | string): Promise<void>
  stop(): Promise<void>
}

/** Starts the server with one empty bucket. */
export async function startSourceBucket(bucket = 'legacy-files'): Promise<SourceBucket> {
  const server = await startS3Server([bucket])
  const credentials = { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey }
  const client = new S3Client({
    region: 'us-east-1',
    endpoint: server.endpoint,
    forcePathStyle: true,
    credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
  })
  return {
    endpoint: server.endpoint,
    bucket,
    server,
    settings: { kind: 's3', bucket, endpoint: server.endpoint, region: 'us-east-1', forcePathStyle: true, ...credentials },
    async put(key, body) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }))
    },
    async stop() {
      client.destroy()
      await server.close()
    },
  }
}
