/**
 * The lane's batched "copied under this key?" (src/files/lane/copied-key-lookup.ts): the first
 * question goes out alone, those asked while it runs go out together in one look-up, each gets
 * its own answer (key and size), and a failed look-up fails only the questions it carried.
 */
import { describe, expect, it } from 'vitest'

import { batchedCopiedUnderKey } from '../../../src/files/lane/copied-key-lookup.ts'
import type { SizedStoreKey } from '../../../src/state/index.ts'

/** A look-up over a fixed set of copied keys that records each call's keys and answers when released. */
function lookupOver(copied: readonly SizedStoreKey[]) {
  const calls: string[][] = []
  const releases: (() => void)[] = []
  let failNext = false
  const lookup = async (keys: readonly SizedStoreKey[]) => {
    calls.push(keys.map((k) => k.storeKey))
    await new Promise<void>((resolve) => releases.push(resolve))
    if (failNext) {
      failNext = false
      throw new Error('the ledger went away')
    }
    return copied.filter((c) => keys.some((k) => k.storeKey === c.storeKey && k.bytes === c.bytes))
  }
  const release = async () => {
    await new Promise((r) => setImmediate(r))
    releases.shift()?.()
    await new Promise((r) => setImmediate(r))
  }
  return { lookup, calls, release, failOnce: () => (failNext = true) }
}

describe('batchedCopiedUnderKey', () => {
  it('sends the first question alone and the ones asked meanwhile together, each answered by key and size', async () => {
    const l = lookupOver([
      { storeKey: 'k1', bytes: 10 },
      { storeKey: 'k3', bytes: 30 },
    ])
    const ask = batchedCopiedUnderKey(l.lookup)
    const first = ask('k1', 10)
    const rest = [ask('k2', 20), ask('k3', 30), ask('k3', 31)]
    expect(l.calls).toEqual([['k1']])
    await l.release()
    expect(await first).toBe(true)
    expect(l.calls).toEqual([['k1'], ['k2', 'k3', 'k3']])
    await l.release()
    expect(await Promise.all(rest)).toEqual([false, true, false])
    // Idle again: the next question goes out at once.
    const later = ask('k1', 10)
    expect(l.calls).toHaveLength(3)
    await l.release()
    expect(await later).toBe(true)
  })

  it("fails the questions of a failed look-up only, and caps a look-up's keys", async () => {
    const l = lookupOver([{ storeKey: 'k2', bytes: 20 }])
    const ask = batchedCopiedUnderKey(l.lookup, 2)
    l.failOnce()
    const failed = expect(ask('k1', 10)).rejects.toThrow('the ledger went away')
    const next = [ask('k2', 20), ask('k3', 30), ask('k4', 40)]
    await l.release()
    await failed
    expect(l.calls).toEqual([['k1'], ['k2', 'k3']])
    await l.release()
    await l.release()
    expect(await Promise.all(next)).toEqual([true, false, false])
    expect(l.calls).toEqual([['k1'], ['k2', 'k3'], ['k4']])
  })
})
