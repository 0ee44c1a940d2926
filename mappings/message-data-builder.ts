/**
 * A message's `data` in `mapMessage`, and the `fieldLimits` policy for it: the platform takes at most
 * 10 KB of `data`, so when the data without its text leaves too little room, the legacy record's own
 * metadata is dropped, then the reactions; if that is still not enough, the message is rejected.
 */
import type { JsonObject } from '../src/model/index.ts'
import { type Attachment, jsonBytes, LIMITS, type MessageData } from '../src/target/schemas.ts'
import { fieldProblem, Rejection } from './common.ts'
import type { MessageContent, MessageScope } from './message-scope.ts'

export interface MessageDataBuilder {
  /** The data of one part: text `t`, attachments `atts`, and `extra` in chatferry's metadata (the part marker…). */
  of(t: string, atts: Attachment[], extra?: JsonObject): MessageData
  /** The JSON size of the data with an empty text and the message's attachments. */
  skeletonBytes(extra?: JsonObject): number
  /** `fieldLimits`: makes room for `minText` bytes of text, or rejects the message; returns the skeleton's size after. */
  makeRoom(minText: number): number
}

/** One object per message, its methods on the prototype (no closures built for every message). */
class DataBuilder implements MessageDataBuilder {
  readonly #scope: MessageScope
  readonly #key: string
  readonly #attachments: Attachment[]
  readonly #customData: JsonObject | undefined
  #legacyMeta: JsonObject | undefined

  constructor(scope: MessageScope, content: MessageContent) {
    this.#scope = scope
    this.#key = scope.ctx.policies.legacyMetadata.key
    this.#attachments = content.attachments
    this.#customData = content.customData
    this.#legacyMeta = scope.record.metadata ?? undefined
  }

  // `own` itself goes into the metadata: it is only changed (in makeRoom) before the metadata that
  // is finally sent is built again.
  #metadataOf(extra?: JsonObject): JsonObject | undefined {
    const own = this.#scope.own
    const legacyMeta = this.#legacyMeta
    const mine = extra === undefined ? own : { ...own, ...extra }
    const m: JsonObject = legacyMeta === undefined ? {} : { ...legacyMeta }
    let any = legacyMeta !== undefined && Object.keys(legacyMeta).length > 0
    for (const _ in mine) {
      m[this.#key] = mine
      any = true
      break
    }
    return any ? m : undefined
  }

  of(t: string, atts: Attachment[], extra?: JsonObject): MessageData {
    const data: MessageData = {}
    if (t !== '') {
      data.text = t
    }
    if (atts.length > 0) {
      data.attachments = atts
    }
    if (this.#customData !== undefined) {
      data.customData = this.#customData
    }
    const metadata = this.#metadataOf(extra)
    if (metadata !== undefined) {
      data.metadata = metadata
    }
    return data
  }

  skeletonBytes(extra?: JsonObject): number {
    return jsonBytes({ ...this.of('', this.#attachments, extra), text: '' })
  }

  makeRoom(minText: number): number {
    const { ctx, out, own } = this.#scope
    const max = LIMITS.MESSAGE_DATA_BYTES_MAX
    let skeleton = this.skeletonBytes()
    if (skeleton + minText > max) {
      if (this.#legacyMeta !== undefined) {
        fieldProblem(ctx, out, 'metadata', `data is over ${max} bytes`, 'metadata-dropped')
        this.#legacyMeta = undefined
      }
      if (this.skeletonBytes() + minText > max && own.reactions !== undefined) {
        fieldProblem(ctx, out, 'reactions', `data is over ${max} bytes`, 'reactions-dropped')
        delete own.reactions
      }
      if (this.skeletonBytes() + minText > max) {
        throw new Rejection('data', `data is over ${max} bytes without its text`)
      }
      skeleton = this.skeletonBytes()
    }
    return skeleton
  }
}

export function createMessageDataBuilder(scope: MessageScope, content: MessageContent): MessageDataBuilder {
  return new DataBuilder(scope, content)
}
