/**
 * The reaction lines of a v2 export by message id, held for the whole session: a message may stand
 * before or after its reactions in the file, and every read streams the messages again. They grow
 * with the export, so they are kept compact, off the JS heap where they can be: each reaction is a
 * slot of four typed arrays (its emoji and its user as indexes into one list of the distinct names,
 * its time, the slot of the message's reaction before it), and a message is one map entry however
 * many reactions it has. A read builds a message's reaction objects again when it needs them.
 */
import type { LegacyReaction } from '../../../src/model/records.ts'

/** No reaction before this one. */
const NONE = -1

export class ReactionIndex {
  /** Each message's latest reaction (a slot). */
  readonly #last = new Map<string, number>()
  readonly #names: string[] = []
  readonly #nameIds = new Map<string, number>()
  #emoji = new Int32Array(1024)
  #user = new Int32Array(1024)
  #prev = new Int32Array(1024)
  /** NaN: the reaction has no time. */
  #at = new Float64Array(1024)
  #size = 0

  /** Adds `r` after the reactions of `messageId` already added. */
  add(messageId: string, r: LegacyReaction): void {
    if (this.#size === this.#at.length) {
      this.#grow()
    }
    const slot = this.#size++
    this.#emoji[slot] = this.#nameId(r.emoji)
    this.#user[slot] = this.#nameId(r.userId)
    this.#at[slot] = r.at ?? Number.NaN
    this.#prev[slot] = this.#last.get(messageId) ?? NONE
    this.#last.set(messageId, slot)
  }

  /** The reactions of `messageId` in the order they were added (new objects), or undefined when it has none. */
  get(messageId: string): LegacyReaction[] | undefined {
    let slot = this.#last.get(messageId)
    if (slot === undefined) {
      return undefined
    }
    const out: LegacyReaction[] = []
    while (slot !== NONE) {
      const emoji = this.#names[this.#emoji[slot] as number] as string
      const userId = this.#names[this.#user[slot] as number] as string
      const at = this.#at[slot] as number
      // Shaped as decodeReaction shapes it: no `at` key when there is no time.
      out.push(Number.isNaN(at) ? { emoji, userId } : { emoji, userId, at })
      slot = this.#prev[slot] as number
    }
    return out.reverse()
  }

  #nameId(name: string): number {
    let id = this.#nameIds.get(name)
    if (id === undefined) {
      id = this.#names.length
      this.#names.push(name)
      this.#nameIds.set(name, id)
    }
    return id
  }

  #grow(): void {
    const size = this.#at.length * 2
    const copy = <A extends Int32Array | Float64Array>(from: A, to: A): A => {
      to.set(from)
      return to
    }
    this.#emoji = copy(this.#emoji, new Int32Array(size))
    this.#user = copy(this.#user, new Int32Array(size))
    this.#prev = copy(this.#prev, new Int32Array(size))
    this.#at = copy(this.#at, new Float64Array(size))
  }
}
