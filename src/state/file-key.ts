/** The key of a distinct file in `chatferry.files`: its reader and the reader's ref (a locator without its host). */
import type { FileLocator } from '../model/files.ts'
import { storableKey } from './safe-text.ts'

export function fileKeyOf(locator: FileLocator): string {
  return storableKey(`${locator.reader}:${locator.ref}`)
}
