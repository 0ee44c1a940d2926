/** The process exit codes every chatferry command uses (documented in docs/operators-guide.md, "Exit codes"). */
export const EXIT = {
  /** Every item done, or skipped by policy. */
  OK: 0,
  /** Stopped by an error; running the same command again resumes. */
  ERROR: 1,
  /** Usage or configuration error; nothing was done. */
  USAGE: 2,
  /** Finished, but some items were rejected (see `chatferry rejects`). */
  REJECTED: 3,
  /**
   * `run --delta --final` finished (every item done, skipped or rejected), but the legacy source
   * changed after its read began: freeze the legacy system and run the final delta again.
   */
  SOURCE_CHANGING: 4,
} as const
