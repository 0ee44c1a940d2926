/**
 * Fault injection for data-import requests. Each app has its own random source: seeded (mulberry32)
 * when its settings have a `seed`, so a test sees the same faults on every run, else Math.random.
 * Every request draws all its dice in the same order, whatever it turns out to need, so the faults
 * a request gets depend only on the seed and the number of requests before it.
 */
import type { FaultSettings } from './app-settings.ts'

/** The faults a data-import request can get, in the order they take precedence. */
export const FAULT_KINDS = ['extra429', 'dropBeforeCommit', 'partialCommit500', 'dropAfterCommit'] as const
export type FaultKind = (typeof FAULT_KINDS)[number]

import { type Random, seededRandom } from '../lib.ts'

export { type Random, seededRandom }

/** What the dice decided for one request. At most one fault fires, in the order of {@link FAULT_KINDS}. */
export interface FaultPlan {
  readonly fault: FaultKind | undefined
  readonly latencyMs: number
  /** The random source, for choosing the subset a partial commit keeps. */
  readonly random: Random
}

/** Per-app fault dice. */
export interface FaultInjector {
  /** Draws the plan of one request of `appId`. */
  plan(appId: string, faults: FaultSettings): FaultPlan
  /** Forgets the app's random source (after its seed changed). */
  reset(appId: string): void
}

/** A fault injector with no app seen yet. */
export function createFaultInjector(): FaultInjector {
  const sources = new Map<string, { seed: number | undefined; random: Random }>()
  function source(appId: string, seed: number | undefined): Random {
    const s = sources.get(appId)
    if (s !== undefined && s.seed === seed) {
      return s.random
    }
    const random = seed === undefined ? Math.random : seededRandom(seed)
    sources.set(appId, { seed, random })
    return random
  }
  return {
    plan(appId, faults) {
      const random = source(appId, faults.seed)
      let fault: FaultKind | undefined
      for (const kind of FAULT_KINDS) {
        const roll = random()
        if (fault === undefined && roll < faults[kind]) {
          fault = kind
        }
      }
      const { min, max } = faults.latencyMs
      const roll = random()
      const latencyMs = max > min ? min + Math.floor(roll * (max - min + 1)) : min
      return { fault, latencyMs, random }
    },
    reset(appId) {
      sources.delete(appId)
    },
  }
}

/**
 * A random non-empty proper subset of `items` (at least one kept, at least one left out); empty
 * when there are fewer than two items, where no such subset exists.
 */
export function properSubset<T>(items: readonly T[], random: Random): T[] {
  if (items.length < 2) {
    return []
  }
  const keep = 1 + Math.floor(random() * (items.length - 1))
  const shuffled = [...items]
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[shuffled[i], shuffled[j]] = [shuffled[j] as T, shuffled[i] as T]
  }
  const chosen = new Set(shuffled.slice(0, keep))
  return items.filter((item) => chosen.has(item))
}
