/**
 * Whether a failed ledger operation is worth trying again (transient) or not (permanent), from the
 * error alone (pure). The lanes' loop-level retry (ledger-retry.ts) retries only the transient
 * ones; a permanent one ends the lane at once, as the operator then has something to fix.
 *
 * Transient — the ledger, or the way to it, is briefly unable to answer, and the same operation can
 * pass unchanged a moment later:
 * - node errno codes of a connection that failed or broke: ECONNREFUSED, ECONNRESET, ECONNABORTED,
 *   ETIMEDOUT, EPIPE, EHOSTUNREACH, EHOSTDOWN, ENETUNREACH, ENETDOWN, ENETRESET, and DNS (EAI_AGAIN,
 *   ENOTFOUND: the name resolved when the ledger was opened, so a failure mid-run is the network's);
 * - node-postgres's own errors of a connection (they carry no code): "Connection terminated…"
 *   (unexpectedly, or by a connection timeout), "timeout exceeded when trying to connect" (pg-pool),
 *   "timeout expired" (connect), "Query read timeout" (`query_timeout`), "Client has encountered a
 *   connection error and is not queryable";
 * - SQLSTATEs (PostgreSQL's Appendix A, "PostgreSQL Error Codes"):
 *   - class 08, connection exception, all of it (08P01 too: PgBouncer reports its own failures,
 *     such as `query_wait_timeout` or a server it cannot reach, as 08P01);
 *   - 40001 serialization_failure and 40P01 deadlock_detected: the server asks for a retry;
 *   - class 53, insufficient resources (53300 too_many_connections, 53100 disk_full, 53200
 *     out_of_memory …): cured by load going down or an operator freeing space, without a change to
 *     chatferry;
 *   - 55P03 lock_not_available (a `lock_timeout`), 57014 query_canceled (a `statement_timeout` or a
 *     cancel of the statement): slow under contention, not wrong;
 *   - 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 57P05
 *     idle_session_timeout: a restart, a failover, or the server closing an idle session;
 *   - 25P03 idle_in_transaction_session_timeout and 25P04 transaction_timeout: the lanes' ledger
 *     transactions await nothing but the ledger, so only a stalled process (a long GC pause, a
 *     starved container) overruns them.
 *
 * Permanent — everything else, as a retry repeats it: a missing migration or table (42P01), a
 * syntax or permission error (class 42), a constraint (class 23), a raised exception (P0001), a
 * read-only replica (25006: the ledger URL points at a standby), the database gone (3D000, 57P04),
 * credentials (class 28), an I/O or internal error of the server (classes 58, XX: for an operator),
 * a closed pool or store ("Cannot use a pool after calling end on the pool", "Client was closed and
 * is not queryable", kysely's "driver has already been destroyed"), and any error without a
 * recognised code: a bug (a TypeError), which no retry fixes.
 *
 * The embedded ledger (PGlite) runs in this process on one session: nothing stands between the
 * lanes and it (no connection, no network, no server to restart), its exclusive mutex lets no two
 * transactions meet (no 40001, 40P01 or 55P03), and it has no signals (a `statement_timeout` never
 * fires: no 57014). Its errors are PostgreSQL's, with the same `code`: what can be transient there is
 * class 53 alone (its directory's disk full, WebAssembly memory exhausted), classed as on a server;
 * "PGlite is closed" / "PGlite is closing" (the store was closed) and a WebAssembly abort are
 * permanent.
 *
 * The error's `cause` chain (and an AggregateError's `errors`, as node's connect reports a refusal
 * on several addresses) is read outermost first: the first link with a code or a known message
 * decides.
 */

export interface LedgerErrorKind {
  readonly transient: boolean
  /** What decided: the SQLSTATE or errno code, when the error has one. */
  readonly code?: string
}

const TRANSIENT_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENETRESET',
  'EAI_AGAIN',
  'ENOTFOUND',
])

/** SQLSTATE classes (the first two characters) that are transient as a whole. */
const TRANSIENT_CLASSES = new Set(['08', '53'])

const TRANSIENT_SQLSTATES = new Set(['40001', '40P01', '55P03', '57014', '57P01', '57P02', '57P03', '57P05', '25P03', '25P04'])

/** node-postgres's and pg-pool's errors of a connection, which carry no code. */
const TRANSIENT_MESSAGES = [
  /^Connection terminated\b/,
  /^timeout exceeded when trying to connect$/,
  /^timeout expired$/,
  /^Query read timeout$/,
  /^Client has encountered a connection error and is not queryable$/,
]

const SQLSTATE = /^[0-9A-Z]{5}$/

/** How deep a cause chain is read. */
const MAX_DEPTH = 8

export function ledgerErrorKind(err: unknown): LedgerErrorKind {
  return decide(err, 0) ?? { transient: false }
}

function decide(err: unknown, depth: number): LedgerErrorKind | undefined {
  if (typeof err !== 'object' || err === null || depth >= MAX_DEPTH) {
    return undefined
  }
  const { code, message, cause, errors } = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown }
  if (typeof code === 'string') {
    return { transient: transientCode(code), code }
  }
  if (typeof message === 'string' && TRANSIENT_MESSAGES.some((m) => m.test(message))) {
    return { transient: true }
  }
  const inner = Array.isArray(errors) ? errors.map((e) => decide(e, depth + 1)).find((k) => k !== undefined) : undefined
  return inner ?? decide(cause, depth + 1)
}

function transientCode(code: string): boolean {
  if (TRANSIENT_ERRNO.has(code)) {
    return true
  }
  return SQLSTATE.test(code) && (TRANSIENT_SQLSTATES.has(code) || TRANSIENT_CLASSES.has(code.slice(0, 2)))
}
