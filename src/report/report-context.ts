/**
 * What the reports read of a job: its ledger, its id and the slices of the configuration they use,
 * each typed by the module that owns it. The job's whole configuration (src/job/config.ts) and its
 * ledger context (src/job/ledger-context.ts) fit these shapes; the reports never import them, so
 * the dependencies point one way (src/job → src/report).
 */
import type { SourceConfig } from '../../connectors/index.ts'
import type { Policies } from '../../mappings/index.ts'
import type { DeepReadonly } from '../lib.ts'
import type { LedgerStore } from '../state/index.ts'
import type { ManagementConfig, TargetConfig } from '../target/config.ts'

/** The configuration as the reports see it. */
export interface ReportConfig {
  /** Where the configuration came from (named in the report, left out of its hash). */
  readonly file: string
  readonly target: TargetConfig
  readonly management?: ManagementConfig | undefined
  readonly source?: DeepReadonly<SourceConfig> | undefined
  readonly policies: DeepReadonly<Policies>
  /** The `files:` section, for what verify expects of message texts (`rewriteTextLinks`). */
  readonly files?: { readonly rewriteTextLinks: boolean } | undefined
}

/** An open job as the reports see it. */
export interface ReportContext {
  readonly config: ReportConfig
  readonly jobId: string
  readonly store: LedgerStore
}
