/**
 * Where a copy lives in the store: content-addressed, `sha256/<first two hex>/<hex>[.ext]`, so the
 * same bytes shared in many messages (or copied again after a crash between the upload and the
 * ledger write) are one object, found by `stat` before any upload. The store puts its own
 * prefix in front. The extension (from the sniffed type, else the file's name) is there so a
 * browser or CDN serving the key by name treats it right; only `[a-z0-9]{1,10}` passes.
 */
import { extensionOf } from './check-bytes.ts'

export function contentKey(sha256: string, extension: string | undefined): string {
  if (!/^[0-9a-f]{64}$/.test(sha256)) {
    throw new Error(`not a hex SHA-256: ${sha256}`)
  }
  const ext = extension !== undefined && SAFE_EXTENSION.test(extension) ? `.${extension}` : ''
  return `sha256/${sha256.slice(0, 2)}/${sha256}${ext}`
}

const SAFE_EXTENSION = /^[a-z0-9]{1,10}$/

/** The extension a copy's key gets: the sniffed one, else the name's (lower-cased) when it is safe. */
export function keyExtension(sniffedExt: string | undefined, name: string): string | undefined {
  const ext = sniffedExt ?? extensionOf(name)
  return SAFE_EXTENSION.test(ext) ? ext : undefined
}
