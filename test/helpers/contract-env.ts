/**
 * What one connector × source gives the shared connector contract suite
 * (test/integration/connectors/connector-contract.test.ts). Each system builds its env in
 * `test/fixtures/<system>/contract-env.ts`; `contract-cases.ts` lists them.
 */
import type { SourceConfigInput } from '../../connectors/index.ts'
import type { ExpectedRows } from '../fixtures/expected-row.ts'

/** A source whose rows another connection can change while a snapshot is open (SQL databases). */
export interface ContractMutation {
  /** Inserts one message (and returns its legacy id) through another connection. */
  insertMessage(): Promise<string>
  removeMessage(id: string): Promise<void>
}

export interface ContractEnv {
  /** The source config for this fixture, with overrides. */
  config(overrides?: Record<string, unknown>): SourceConfigInput
  /** The rows the fixture's seed predicts (records and problems), all or changed since `since`. */
  expected(since?: number): ExpectedRows
  /** A delta watermark that splits the fixture's change times. */
  readonly deltaSince: number
  /** The fewest message problems the fixture plants (the suite checks they are really there). */
  readonly minMessageProblems: number
  /**
   * Absent for a static export (a file cannot change under an open snapshot: the snapshot tests
   * that need a concurrent writer are skipped, with this reason in their title).
   */
  readonly mutation?: ContractMutation
  /** Source connections open on the server (absent or undefined: not observable). */
  openConnections?(): Promise<number | undefined>
  /**
   * A config that cannot be opened; `names` is what the error must name (the host, the file) and
   * `secret`, when set, what it must never show.
   */
  readonly unreachable: { readonly config: SourceConfigInput; readonly names: string; readonly secret?: string }
  /** A config whose messages query lacks a required column, and that column (generic-sql only). */
  readonly missingColumn?: { readonly config: SourceConfigInput; readonly column: string }
  drop(): Promise<void>
}

export interface ContractCase {
  readonly title: string
  /** Why this case cannot run here (a server missing), or undefined. */
  readonly skip?: string
  open(): Promise<ContractEnv>
}
