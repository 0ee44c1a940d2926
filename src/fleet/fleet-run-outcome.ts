/**
 * How one tenant of a fleet run ended, and what the fleet's exit code is (pure). A tenant ends
 * `done`, `rejected` (finished, some items refused), `failed` (with its reason, and whether a rerun
 * can fix it) or `stopped` (a signal). The fleet's code follows the exit codes of every command (docs/operators-guide.md): 2 when any
 * tenant needs a fix first, else 1 when any failed or stopped (rerun: it resumes), else 3 when any
 * has rejects, else 0.
 */
import { ChatferryError, ConfigError } from '../errors.ts'
import { FatalLoadError } from '../load/fatal-load-error.ts'
import type { LoadOutcomeStatus } from '../load/loader.ts'
import type { EntityStats } from '../state/store.ts'
import { PlatformError } from '../target/errors.ts'

export const TENANT_STATES = ['done', 'rejected', 'failed', 'stopped'] as const
export type TenantEndState = (typeof TENANT_STATES)[number]

export interface TenantOutcome {
  readonly tenantId: string
  readonly jobId: string
  readonly state: TenantEndState
  /** For `failed`: a rerun cannot fix it (configuration, refused key or app, a source that refuses the query or login). */
  readonly needsFix: boolean
  /** Why it failed or stopped (no secret: messages never carry one). */
  readonly reason?: string
  readonly stats: readonly EntityStats[]
}

/** The process exit codes a fleet run uses (every command's: src/cli/exit-codes.ts). */
export const FLEET_EXIT = { OK: 0, ERROR: 1, USAGE: 2, REJECTED: 3 } as const

/** A failure a rerun cannot fix, for the exit code: the same rule the CLI applies to a single job (src/cli/main.ts). */
export function needsFix(err: unknown): boolean {
  if (err instanceof ConfigError) {
    return true
  }
  if (err instanceof ChatferryError) {
    return err.code === 'CONFIG_INVALID' || err.code === 'SOURCE_INVALID' || err.code === 'DELTA_BEFORE_FULL_READ'
  }
  const cause = err instanceof FatalLoadError ? err.cause : err
  return cause instanceof PlatformError && cause.kind === 'http' && (cause.status === 401 || cause.status === 403 || cause.status === 404)
}

/** The first line of an error's message, with the error code when chatferry's. */
export function reasonOf(err: unknown): string {
  const e = err instanceof Error ? err : new Error(String(err))
  const first = e instanceof ConfigError ? e.problems.map((p) => `${p.path}: ${p.message}`).join('; ') : (e.message.split('\n')[0] ?? '')
  return e instanceof ChatferryError && !(e instanceof ConfigError) ? `${first} [${e.code}]` : first
}

/** A tenant's end from its loader's outcome status. */
export function endOfLoad(status: LoadOutcomeStatus): TenantEndState {
  return status === 'done' ? 'done' : status
}

/** The fleet's exit code from every tenant's end. */
export function fleetExitCode(outcomes: readonly Pick<TenantOutcome, 'state' | 'needsFix'>[]): number {
  if (outcomes.some((o) => o.state === 'failed' && o.needsFix)) {
    return FLEET_EXIT.USAGE
  }
  if (outcomes.some((o) => o.state === 'failed' || o.state === 'stopped')) {
    return FLEET_EXIT.ERROR
  }
  if (outcomes.some((o) => o.state === 'rejected')) {
    return FLEET_EXIT.REJECTED
  }
  return FLEET_EXIT.OK
}
