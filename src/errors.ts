/**
 * chatferry's few error types. Each carries a stable `code` so callers (and the CLI's exit code)
 * branch on the code, never on the message. Messages never contain secrets.
 * The platform's failures are not here: the client throws `PlatformError` (src/target/errors.ts),
 * which carries the platform's own code and whether retrying can help.
 */

export const ERROR_CODES = [
  /** The configuration file or a command-line flag is invalid. Exit code 2. */
  'CONFIG_INVALID',
  /** The legacy source cannot be reached or a query against it failed. */
  'SOURCE_UNAVAILABLE',
  /**
   * The source answered, but refuses what the configuration asks of it: a table or column that
   * does not exist, a query with a syntax error, wrong credentials, no such database, no read
   * permission. Running again cannot help: fix the configuration or the source. Exit code 2.
   */
  'SOURCE_INVALID',
  /** A legacy row could not be turned into a valid import item. */
  'MAPPING_INVALID',
  /** The state store refused an operation because another process holds the job. */
  'CHECKPOINT_CONFLICT',
  /**
   * A delta run on a job whose full read of an entity never completed: there is no watermark to
   * read changes from. Running the delta again cannot help: run `chatferry run` first. Exit code 2.
   */
  'DELTA_BEFORE_FULL_READ',
] as const
export type ErrorCode = (typeof ERROR_CODES)[number]

export class ChatferryError extends Error {
  readonly code: ErrorCode
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'ChatferryError'
    this.code = code
  }
}

/** One problem found in a configuration file: where it is and what is wrong with it. */
export interface ConfigProblem {
  /** Dotted path into the file, e.g. `target.quota.requestsPerMinute`; empty for the file itself. */
  readonly path: string
  readonly message: string
}

/** Thrown before any I/O when the configuration is invalid; lists every problem at once. */
export class ConfigError extends ChatferryError {
  readonly problems: readonly ConfigProblem[]
  constructor(file: string, problems: readonly ConfigProblem[]) {
    const lines = problems.map((p) => `  - ${p.path === '' ? '(file)' : p.path}: ${p.message}`)
    super('CONFIG_INVALID', `${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'} in the configuration\n${lines.join('\n')}`)
    this.name = 'ConfigError'
    this.problems = problems
  }
}

/** Normalises anything thrown into an `Error`. */
export function coerceError(err: unknown): Error & { code?: unknown } {
  if (err instanceof Error) {
    return err
  }
  return new Error(typeof err === 'string' ? err : JSON.stringify(err))
}
