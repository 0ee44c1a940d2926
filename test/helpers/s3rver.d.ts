/** Types for s3rver (it ships none): the part of its API the tests use. */
declare module 's3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http'

  export interface S3rverOptions {
    readonly address?: string
    readonly port?: number
    readonly silent?: boolean
    readonly directory: string
    readonly resetOnClose?: boolean
    readonly allowMismatchedSignatures?: boolean
    readonly configureBuckets?: readonly { readonly name: string }[]
  }
  export default class S3rver {
    constructor(options: S3rverOptions)
    configureBuckets(): Promise<void>
    /** The Koa request handler. */
    callback(): (req: IncomingMessage, res: ServerResponse) => void
  }
}
