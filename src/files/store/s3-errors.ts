/**
 * What an S3 SDK error means, in words an operator can act on, built from the error's name, its
 * HTTP status and its network code only — never from its message, and never with a credential.
 * `configuration` is true for the errors a fix of `files.store` (or the bucket's policy) cures.
 */

export interface S3Problem {
  readonly configuration: boolean
  readonly message: string
}

const PERMISSIONS = 's3:PutObject, s3:GetObject, s3:ListBucket and s3:AbortMultipartUpload'
const NETWORK = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE'])

export function explainS3Error(err: unknown): S3Problem {
  const e = err as {
    name?: unknown
    code?: unknown
    $metadata?: { httpStatusCode?: unknown }
    errors?: { code?: unknown }[]
    cause?: { code?: unknown }
  }
  const name = typeof e.name === 'string' ? e.name : 'Error'
  const status = typeof e.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : undefined
  const code = [e.code, e.errors?.[0]?.code, e.cause?.code].find((c): c is string => typeof c === 'string')
  switch (name) {
    case 'InvalidAccessKeyId':
      return { configuration: true, message: 'the store does not know the access key id (files.store.accessKeyId)' }
    case 'SignatureDoesNotMatch':
      return { configuration: true, message: 'the secret access key does not match the access key id (files.store.secretAccessKey)' }
    case 'NoSuchBucket':
      return { configuration: true, message: 'the bucket does not exist (files.store.bucket)' }
    case 'AccessDenied':
    case 'AllAccessDisabled':
      return { configuration: true, message: `access denied: the credentials need ${PERMISSIONS} on the bucket` }
    case 'CredentialsProviderError':
      return {
        configuration: true,
        message: 'no credentials: set files.store.accessKeyId and secretAccessKey, or the AWS SDK environment (AWS_ACCESS_KEY_ID, AWS_PROFILE, …)',
      }
    case 'PermanentRedirect':
    case 'AuthorizationHeaderMalformed':
    case 'IllegalLocationConstraintException':
      return { configuration: true, message: `the bucket is in another region than files.store.region (${name})` }
    case 'InvalidBucketName':
      return { configuration: true, message: 'the bucket name is not valid (files.store.bucket)' }
  }
  if (code !== undefined && NETWORK.has(code)) {
    return { configuration: true, message: `cannot reach the endpoint (${code})` }
  }
  if (name === 'TimeoutError' || code === 'ECONNABORTED') {
    return { configuration: true, message: 'the endpoint did not answer in time' }
  }
  if (status === 403) {
    return { configuration: true, message: `access denied (HTTP 403): the credentials need ${PERMISSIONS} on the bucket` }
  }
  return { configuration: false, message: `${name}${status === undefined ? '' : ` (HTTP ${status})`}${code === undefined ? '' : ` ${code}`}` }
}
