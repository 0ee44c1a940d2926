/**
 * What every step of a verify shares: the ledger's lookups, the paced chat client, the counts, the
 * mismatch list and the items to plan again (`replan-missing.ts` fills the {@link ReplanList}).
 */
import type { ChatBudget } from '../load/chat-budget.ts'
import { LEGACY_ENTITIES } from '../model/index.ts'
import type { VerifyLookups } from '../state/index.ts'
import type { PlatformClient } from '../target/client.ts'
import type { Mismatch, VerifyReport } from './schema.ts'

/**
 * The commands a verify's notes advise, as the operator runs them: a single job's by default, a
 * fleet tenant's from `fleet verify` (its job has no configuration file of its own).
 */
export interface VerifyAdvice {
  /** Plans and loads what the source has beyond the ledger. */
  readonly delta: string
  /** Plans and loads the source's rows the ledger never planned, whatever their change time (the key reconciliation). */
  readonly reconcile: string
  /** Sends what is planned. */
  readonly load: string
  /** Lists what the platform refused. */
  readonly rejects: string
  /** Plans again what the ledger calls loaded and the platform lacks (`replan-missing.ts`). */
  readonly replan: string
  /** Plans rejected items and updates again, once their cause is fixed. */
  readonly retry: string
}

/** A single job's commands. */
export const JOB_ADVICE: VerifyAdvice = {
  delta: 'chatferry run --delta',
  reconcile: 'chatferry run --delta --reconcile-keys',
  load: 'chatferry load',
  rejects: 'chatferry rejects',
  replan: 'chatferry verify --replan',
  retry: 'chatferry retry-rejected',
}

/** The items one verify plans again, per entity. */
export interface ReplanList {
  /** Whether this verify plans them again (`--replan`); otherwise it only advises it. */
  readonly enabled: boolean
  /** Done items absent on the platform (imported again) and rejected items present there (sent, answered "already exists", done). */
  readonly items: Map<string, Set<string>>
  /** Items with a done removal still on the platform: the removal is sent again. */
  readonly removals: Map<string, Set<string>>
}

export interface VerifyRun {
  readonly jobId: string
  /** The commands the notes advise. */
  readonly advice: VerifyAdvice
  /** What `--replan` plans again (or, without it, only advises). */
  readonly replan: ReplanList
  readonly lookups: VerifyLookups
  readonly client: PlatformClient
  /** Every chat read goes through it (paced below the chat rate limit). */
  readonly pacer: ChatBudget
  readonly signal: AbortSignal | undefined
  /**
   * Where chatferry wrote each message's legacy id (`data.metadata[key].id`, policy
   * `legacyMetadata.key`): listed messages are matched with ledger items by it (`src/target/message-match.ts`).
   */
  readonly legacyMetadataKey: string
  /**
   * `files.rewriteTextLinks`: the loader sent the sampled texts with the legacy URLs of copied
   * files rewritten to the store's; verify expects the same rewrite (src/report/message-sample.ts).
   */
  readonly rewriteTextLinks: boolean
  /** The report's per-entity counts, filled in by the steps. */
  readonly entities: VerifyReport['entities']
  /** Records a mismatch (see `mismatch-list.ts`). */
  readonly add: (m: Mismatch) => void
}

/** Per-entity counts at zero, source not compared. */
export function emptyVerifyEntities(): VerifyReport['entities'] {
  return Object.fromEntries(
    LEGACY_ENTITIES.map((e) => [e, { ledgerDone: 0, ledgerOpen: 0, platform: 0, missing: 0, unexpected: 0, duplicates: 0, source: null }]),
  ) as VerifyReport['entities']
}
