/**
 * Opening the job's legacy source, written once for planning (plan-from-source.ts) and for the
 * plan report (run-plan.ts): the source must be configured, the policy module
 * (`policies.module`) is loaded relative to the configuration file, and each read runs in one
 * snapshot session that is closed again whatever happens, so no read transaction stays open
 * after it (a load can take days).
 */
import { dirname } from 'node:path'

import { createConnector, type SourceConfig } from '../../connectors/index.ts'
import { type AdjustFn, loadUserModule } from '../../mappings/index.ts'
import { ConfigError } from '../errors.ts'
import type { SourceSession } from '../model/connector.ts'
import type { ResolvedConfig } from './config.ts'

/** The job's source, checked and with its policy module loaded; nothing is connected yet. */
export interface JobSource {
  /** Rows per keyset page (`source.pageSize`). */
  readonly pageSize: number
  /** The policy module's `adjust`, when `policies.module` names one. */
  readonly adjust: AdjustFn | undefined
  /** Opens one snapshot session, runs `work` in it and closes it again, whatever happens. */
  read<T>(work: (session: SourceSession) => Promise<T>): Promise<T>
}

/**
 * The job's source. Throws {@link ConfigError} when the configuration has none; `purpose` ends
 * that message ("`source` is required to <purpose> (connector, url, …)").
 */
export async function openSource(config: Pick<ResolvedConfig, 'file' | 'source' | 'policies'>, purpose: string): Promise<JobSource> {
  const source = config.source
  if (source === undefined) {
    throw new ConfigError(config.file, [{ path: 'source', message: `is required to ${purpose} (connector, url, …)` }])
  }
  const adjust = config.policies.module ? (await loadUserModule(config.policies.module, dirname(config.file))).adjust : undefined
  return {
    pageSize: source.pageSize,
    adjust,
    async read(work) {
      // The resolved config is deeply readonly; connectors only read their settings.
      const session = await createConnector(source as SourceConfig).open()
      try {
        return await work(session)
      } finally {
        await session.close()
      }
    },
  }
}
