/**
 * The lane's "is a file of the job already copied under this key?" (copyFile's `copiedUnderKey`)
 * asked of the ledger for many copies at once: the first question goes out alone at once; those
 * that arrive while a look-up is running wait for it and then go out together in the next one
 * (at most `maxBatch` keys a query). No timer and no added wait when the ledger is quick; when
 * it is slow (a busy machine, many copies finishing together), one query answers a group of files
 * instead of one per file. A failed look-up fails the questions it carried, as one query per file
 * would have.
 */
import type { SizedStoreKey } from '../../state/index.ts'

/** The ledger's batched look-up (`store.files.copiedUnderKeys` for one job): the keys found. */
export type CopiedKeysLookup = (keys: readonly SizedStoreKey[]) => Promise<readonly SizedStoreKey[]>

interface Question {
  readonly key: SizedStoreKey
  readonly resolve: (found: boolean) => void
  readonly reject: (err: unknown) => void
}

export function batchedCopiedUnderKey(lookup: CopiedKeysLookup, maxBatch = 256): (storeKey: string, bytes: number) => Promise<boolean> {
  const waiting: Question[] = []
  let running = false

  async function drain(): Promise<void> {
    running = true
    while (waiting.length > 0) {
      const batch = waiting.splice(0, maxBatch)
      try {
        const found = new Set((await lookup(batch.map((q) => q.key))).map((k) => `${k.bytes} ${k.storeKey}`))
        for (const q of batch) {
          q.resolve(found.has(`${q.key.bytes} ${q.key.storeKey}`))
        }
      } catch (err) {
        for (const q of batch) {
          q.reject(err)
        }
      }
    }
    running = false
  }

  return (storeKey, bytes) =>
    new Promise<boolean>((resolve, reject) => {
      waiting.push({ key: { storeKey, bytes }, resolve, reject })
      if (!running) {
        void drain()
      }
    })
}
