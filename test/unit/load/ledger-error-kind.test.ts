/**
 * Transient or permanent (src/load/ledger-error-kind.ts): a table of the errors the ledger's drivers
 * raise, built as node-postgres builds them (its DatabaseError with the server's SQLSTATE, node's
 * errno errors, its own uncoded connection errors), wrapped as kysely and node wrap them; then the
 * real thing from node-postgres, no server needed: a refused port, a server that hangs up, a pool
 * after `end`. (PGlite raises the server's errors with the same `code`, and "PGlite is closed"
 * without one; starting it costs seconds, too many for a table.)
 */
import { createServer, type Server } from 'node:net'

import pg from 'pg'
import { describe, expect, it } from 'vitest'

import { ledgerErrorKind } from '../../../src/load/ledger-error-kind.ts'

/** The server's answer as node-postgres raises it. */
function serverError(code: string, message = `error ${code}`): Error {
  return Object.assign(new pg.DatabaseError(message, 100, 'error'), { code, severity: 'ERROR' })
}

/** A socket error as node raises it. */
function errno(code: string): Error {
  return Object.assign(new Error(`connect ${code} 10.0.0.7:5432`), { code, errno: -1, syscall: 'connect' })
}

describe('SQLSTATEs', () => {
  it.each([
    ['08000', 'connection_exception'],
    ['08003', 'connection_does_not_exist'],
    ['08006', 'connection_failure'],
    ['08001', 'sqlclient_unable_to_establish_sqlconnection'],
    ['08004', 'sqlserver_rejected_establishment_of_sqlconnection'],
    ['08007', 'transaction_resolution_unknown'],
    ['08P01', 'protocol_violation (PgBouncer)'],
    ['40001', 'serialization_failure'],
    ['40P01', 'deadlock_detected'],
    ['53000', 'insufficient_resources'],
    ['53100', 'disk_full'],
    ['53200', 'out_of_memory'],
    ['53300', 'too_many_connections'],
    ['53400', 'configuration_limit_exceeded'],
    ['55P03', 'lock_not_available'],
    ['57014', 'query_canceled'],
    ['57P01', 'admin_shutdown'],
    ['57P02', 'crash_shutdown'],
    ['57P03', 'cannot_connect_now'],
    ['57P05', 'idle_session_timeout'],
    ['25P03', 'idle_in_transaction_session_timeout'],
    ['25P04', 'transaction_timeout'],
  ])('%s %s: transient', (code) => {
    expect(ledgerErrorKind(serverError(code))).toEqual({ transient: true, code })
  })

  it.each([
    ['42P01', 'undefined_table'],
    ['42703', 'undefined_column'],
    ['42601', 'syntax_error'],
    ['42501', 'insufficient_privilege'],
    ['23514', 'check_violation'],
    ['23505', 'unique_violation'],
    ['23503', 'foreign_key_violation'],
    ['22P02', 'invalid_text_representation'],
    ['P0001', 'raise_exception'],
    ['25006', 'read_only_sql_transaction'],
    ['25P02', 'in_failed_sql_transaction'],
    ['40002', 'transaction_integrity_constraint_violation'],
    ['55000', 'object_not_in_prerequisite_state'],
    ['57P04', 'database_dropped'],
    ['3D000', 'invalid_catalog_name'],
    ['28P01', 'invalid_password'],
    ['0A000', 'feature_not_supported'],
    ['58030', 'io_error'],
    ['XX000', 'internal_error'],
  ])('%s %s: permanent', (code) => {
    expect(ledgerErrorKind(serverError(code))).toEqual({ transient: false, code })
  })
})

describe('errors of the connection', () => {
  it.each([
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
  ])('%s: transient', (code) => {
    expect(ledgerErrorKind(errno(code))).toEqual({ transient: true, code })
  })

  it.each(['EACCES', 'ENOENT', 'ERR_INVALID_ARG_TYPE'])('%s: permanent', (code) => {
    expect(ledgerErrorKind(errno(code))).toEqual({ transient: false, code })
  })

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'timeout expired',
    'Query read timeout',
    'Client has encountered a connection error and is not queryable',
  ])('node-postgres "%s": transient', (message) => {
    expect(ledgerErrorKind(new Error(message))).toEqual({ transient: true })
  })
})

describe('everything else: permanent', () => {
  it.each([
    ['a closed pool', new Error('Cannot use a pool after calling end on the pool')],
    ['a closed client', new Error('Client was closed and is not queryable')],
    ['a destroyed kysely', new Error('driver has already been destroyed')],
    ['a closed PGlite', new Error('PGlite is closed')],
    ['a closing PGlite', new Error('PGlite is closing')],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['an unknown error', new Error('something else')],
    ['a message that only names a connection', new Error('the ledger lost its Connection terminated unexpectedly')],
    ['a thrown string', 'Connection terminated unexpectedly'],
    ['undefined', undefined],
    ['null', null],
  ])('%s', (_, err) => {
    expect(ledgerErrorKind(err)).toEqual({ transient: false })
  })
})

describe('wrapped errors: the first link with a code or a known message decides', () => {
  it.each([
    [
      "kysely's rolled-back transaction over 25P02",
      new Error('Transaction was rolled back instead of committed', { cause: serverError('25P02') }),
      false,
    ],
    ['a wrapper over a serialization failure', new Error('claiming failed', { cause: serverError('40001') }), true],
    ['a wrapper over a reset', new Error('claiming failed', { cause: new Error('x', { cause: errno('ECONNRESET') }) }), true],
    ["pg-pool's connection timeout over a reset", new Error('Connection terminated due to connection timeout', { cause: errno('ECONNRESET') }), true],
    ['an outer code over a transient cause', Object.assign(new Error('fenced', { cause: errno('ECONNRESET') }), { code: 'FENCED' }), false],
    ["node's refusal on every address", new AggregateError([errno('ECONNREFUSED'), errno('ECONNREFUSED')]), true],
  ])('%s', (_, err, transient) => {
    expect(ledgerErrorKind(err).transient).toBe(transient)
  })

  it('a cause chain that loops ends (permanent)', () => {
    const a = new Error('a')
    const b = new Error('b', { cause: a })
    Object.assign(a, { cause: b })
    expect(ledgerErrorKind(a)).toEqual({ transient: false })
  })
})

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as { port: number }).port
}

async function closed(server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.close(() => resolve()))
}

describe('real node-postgres errors', () => {
  it('a refused connection (nothing listens on the port): transient ECONNREFUSED', async () => {
    const server = createServer()
    const port = await listening(server)
    await closed(server)
    const err = await new pg.Client({ host: '127.0.0.1', port }).connect().catch((e: unknown) => e)
    expect(ledgerErrorKind(err)).toEqual({ transient: true, code: 'ECONNREFUSED' })
  })

  it('a server that hangs up: transient "Connection terminated unexpectedly"', async () => {
    const server = createServer((socket) => socket.destroy())
    const port = await listening(server)
    try {
      const err = await new pg.Client({ host: '127.0.0.1', port }).connect().catch((e: unknown) => e)
      expect((err as Error).message).toMatch(/^Connection terminated/)
      expect(ledgerErrorKind(err).transient).toBe(true)
    } finally {
      await closed(server)
    }
  })

  it('a pool after end: permanent', async () => {
    const pool = new pg.Pool({ host: '127.0.0.1', port: 1 })
    await pool.end()
    const err = await pool.query('select 1').catch((e: unknown) => e)
    expect((err as Error).message).toBe('Cannot use a pool after calling end on the pool')
    expect(ledgerErrorKind(err)).toEqual({ transient: false })
  })
})
