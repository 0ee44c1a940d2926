/**
 * The encryption of the tenants' app keys at rest: AES-256-GCM (`node:crypto`) with a 32-byte key
 * from `CHATFERRY_FLEET_KEY`. A fleet command refuses to start without it. Each sealed key is bound
 * to its fleet, tenant and app (the GCM additional data), so a stored key copied onto another
 * tenant's row does not open. Nothing here logs or prints a key, sealed or not.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

import { ConfigError } from '../errors.ts'

/** The environment variable holding the fleet key: 32 random bytes as 64 hex digits or base64. */
export const FLEET_KEY_ENV = 'CHATFERRY_FLEET_KEY'

const ALGORITHM = 'aes-256-gcm'
const IV_BYTES = 12
const TAG_BYTES = 16
const FORMAT = 'v1'

/** Where a sealed key belongs; part of the ciphertext's authentication. */
export interface SealContext {
  readonly fleetId: string
  readonly tenantId: string
  readonly appId: string
}

export interface KeyVault {
  /** A short fingerprint of the fleet key (not the key): which key sealed a stored value. */
  readonly keyId: string
  /** `v1:<iv>:<tag>:<ciphertext>` (base64url parts). */
  seal(plaintext: string, context: SealContext): string
  /** The plaintext, or a {@link VaultError} when the key or the context is not the one that sealed it. */
  open(sealed: string, context: SealContext): string
}

/** A stored key that does not open with this fleet key; never carries key material. */
export class VaultError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'VaultError'
  }
}

function additionalData(context: SealContext): Buffer {
  return Buffer.from(JSON.stringify(['chatferry-fleet-key', context.fleetId, context.tenantId, context.appId]), 'utf8')
}

/** The 32 key bytes of the variable's value, or the reason it is not a key. */
export function parseFleetKey(value: string | undefined): { key: Buffer } | { problem: string } {
  if (value === undefined || value.trim() === '') {
    return {
      problem: `is not set: the tenants' app keys are stored encrypted with it. Make one with \`openssl rand -base64 32\`, keep it in your secret store, and set ${FLEET_KEY_ENV} for every fleet command`,
    }
  }
  const text = value.trim()
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : /^[A-Za-z0-9+/_-]{43}=?$/.test(text) ? Buffer.from(text, 'base64') : undefined
  if (key === undefined || key.length !== 32) {
    return { problem: 'must be 32 random bytes as 64 hex digits or base64 (44 characters), e.g. the output of `openssl rand -base64 32`' }
  }
  return { key }
}

/** The vault over `CHATFERRY_FLEET_KEY`; throws {@link ConfigError} (exit 2) when it is missing or malformed. */
export function openKeyVault(env: NodeJS.ProcessEnv = process.env): KeyVault {
  const parsed = parseFleetKey(env[FLEET_KEY_ENV])
  if ('problem' in parsed) {
    throw new ConfigError('environment', [{ path: FLEET_KEY_ENV, message: parsed.problem }])
  }
  return keyVault(parsed.key)
}

/**
 * Proves the fleet key on a tenant's stored key before a command touches the tenant: throws
 * {@link ConfigError} (exit 2) naming the tenant when the sealed key does not open. The opened
 * key is dropped at once; nothing carries key material.
 */
export function proveFleetKey(vault: KeyVault, sealed: string, context: SealContext): void {
  try {
    vault.open(sealed, context)
  } catch (err) {
    if (!(err instanceof VaultError)) {
      throw err
    }
    throw new ConfigError('environment', [{ path: FLEET_KEY_ENV, message: `${err.message}; nothing was sent: set the fleet's key` }])
  }
}

export function keyVault(key: Buffer): KeyVault {
  const keyId = createHash('sha256').update('chatferry-fleet-key-id').update(key).digest('hex').slice(0, 12)
  return {
    keyId,
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES })
      cipher.setAAD(additionalData(context))
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      return [FORMAT, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join(':')
    },
    open(sealed, context) {
      const [format, iv, tag, body, ...rest] = sealed.split(':')
      if (format !== FORMAT || iv === undefined || tag === undefined || body === undefined || rest.length > 0) {
        throw new VaultError(`the stored key of tenant ${context.tenantId} is not in the ${FORMAT} format`)
      }
      try {
        const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES })
        decipher.setAAD(additionalData(context))
        decipher.setAuthTag(Buffer.from(tag, 'base64url'))
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
      } catch {
        throw new VaultError(
          `the stored key of tenant ${context.tenantId} (app ${context.appId}) does not open with ${FLEET_KEY_ENV} (key id ${keyId}): it was sealed with another key, or for another tenant`,
        )
      }
    },
  }
}
