/**
 * `store.fleet` (src/state/fleet-ledger.ts) on a real Postgres ledger: a binding is added once and
 * kept, state changes compare and set, one app serves one tenant, and one process at a time holds a
 * fleet's provisioning lock (released when the work ends; a killed holder's connection closes with
 * it: fleet-provision.test.ts reruns after a SIGKILL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { type LedgerStore, openLedger } from '../../../src/state/index.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'

let db: TestDatabase
let a: LedgerStore
let b: LedgerStore

beforeAll(async () => {
  db = await createTestDatabase('cf_fleet_ledger')
  a = await openLedger({ url: db.url })
  b = await openLedger({ url: db.url })
})
afterAll(async () => {
  await a?.close()
  await b?.close()
  await db?.drop()
})

const row = (tenantId: string) => ({ fleetId: 'f', tenantId, jobId: `f_${tenantId}`, appName: `App ${tenantId}`, region: 'eu' })

describe('store.fleet', () => {
  it('ensure adds a pending binding once and keeps what was recorded', async () => {
    const first = await a.fleet.ensure(row('t1'))
    expect([first.state, first.appId, first.jobId, first.steps]).toEqual(['pending', undefined, 'f_t1', {}])
    expect(
      await a.fleet.update('f', 't1', { appId: 'app1', sealedKey: 'v1:x:y:z', keyId: 'kid', state: 'created', steps: { createSent: true } }),
    ).toBe(true)
    const again = await b.fleet.ensure({ ...row('t1'), appName: 'Renamed' })
    expect([again.state, again.appId, again.appName, again.sealedKey, again.keyId, again.steps]).toEqual([
      'created',
      'app1',
      'App t1',
      'v1:x:y:z',
      'kid',
      { createSent: true },
    ])
    expect((await a.fleet.bindings('f')).map((x) => x.tenantId)).toEqual(['t1'])
    expect(await a.fleet.binding('other-fleet', 't1')).toBeUndefined()
  })

  it('a state change with fromStates is a compare-and-set', async () => {
    await a.fleet.ensure(row('t2'))
    expect(await a.fleet.update('f', 't2', { state: 'creating' }, ['pending'])).toBe(true)
    expect(await b.fleet.update('f', 't2', { state: 'creating' }, ['pending'])).toBe(false)
    expect((await a.fleet.binding('f', 't2'))?.state).toBe('creating')
  })

  it('one app serves one tenant', async () => {
    await a.fleet.ensure(row('t3'))
    await expect(a.fleet.update('f', 't3', { appId: 'app1' })).rejects.toThrow(/fleet_tenants_app_idx|duplicate key/)
  })

  it('one process at a time holds the fleet lock, per fleet; it is free again when the work ends', async () => {
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const inside = new Promise<void>((r) => (entered = r))
    const first = a.fleet.exclusive('f', async () => {
      entered()
      await held
      return 'first'
    })
    await inside
    expect(await b.fleet.exclusive('f', async () => 'second')).toEqual({ locked: false })
    expect(await b.fleet.exclusive('other', async () => 'other fleet')).toEqual({ locked: true, value: 'other fleet' })
    release()
    expect(await first).toEqual({ locked: true, value: 'first' })
    expect(await b.fleet.exclusive('f', async () => 'now')).toEqual({ locked: true, value: 'now' })
  })
})
