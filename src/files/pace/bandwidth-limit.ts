/**
 * `files.bandwidthBytesPerSecond`: one cap shared by every download of the process. A token
 * bucket (one second's worth of burst) that each download's {@link BandwidthLimit.throttle}
 * Transform draws from before it passes a chunk on; when the bucket is empty the chunk waits, the
 * stream's backpressure slows the socket, and memory stays bounded (a chunk at a time).
 */
import { Transform } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'

export interface BandwidthLimit {
  readonly bytesPerSecond: number
  /** Waits until `bytes` may pass. */
  take(bytes: number, signal?: AbortSignal): Promise<void>
  /** A pass-through stream that passes bytes only as fast as the shared cap allows. */
  throttle(signal?: AbortSignal): Transform
}

export function createBandwidthLimit(bytesPerSecond: number, now: () => number = () => performance.now()): BandwidthLimit {
  const capacity = bytesPerSecond
  let tokens = capacity
  let last = now()
  // Takers wait in turn, so a large chunk is not starved by small ones.
  let turn: Promise<void> = Promise.resolve()
  const refill = () => {
    const t = now()
    tokens = Math.min(capacity, tokens + ((t - last) / 1000) * bytesPerSecond)
    last = t
  }
  const takeNow = async (bytes: number, signal?: AbortSignal) => {
    // A chunk bigger than a second's worth passes in pieces of at most the capacity.
    let left = bytes
    while (left > 0) {
      const want = Math.min(left, capacity)
      refill()
      if (tokens < want) {
        await sleep(Math.ceil(((want - tokens) / bytesPerSecond) * 1000), undefined, signal ? { signal } : {})
        refill()
      }
      tokens -= want
      left -= want
    }
  }
  const limit: BandwidthLimit = {
    bytesPerSecond,
    take(bytes, signal) {
      const mine = turn.then(() => takeNow(bytes, signal))
      turn = mine.catch(() => undefined)
      return mine
    },
    throttle(signal) {
      return new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          limit.take(chunk.length, signal).then(
            () => callback(null, chunk),
            (err: unknown) => callback(err as Error),
          )
        },
      })
    },
  }
  return limit
}
