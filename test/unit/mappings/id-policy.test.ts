import { describe, expect, it } from 'vitest'

import {
  alternativeId,
  type IdMapEntry,
  isPlatformId,
  MemoryIdRegistry,
  messageMuid,
  partMuid,
  stableHash,
  toPlatformId,
} from '../../../mappings/ids.ts'
import { ID_PATTERN } from '../../../src/target/schemas.ts'

const h = stableHash

describe('toPlatformId', () => {
  it.each([
    { name: 'already valid: kept unchanged', legacy: 'abc-123_x', expected: 'abc-123_x' },
    { name: 'Mattermost-style 26-char id unchanged', legacy: 'k3s9qz1x7ebm8p5uyr4cwa2ndh', expected: 'k3s9qz1x7ebm8p5uyr4cwa2ndh' },
    { name: 'exactly 100 valid chars unchanged', legacy: 'a'.repeat(100), expected: 'a'.repeat(100) },
    { name: 'uppercase: lowercased + hash of the original', legacy: 'ABC', expected: `abc_${h('ABC')}` },
    { name: 'case-only difference gets its own hash', legacy: 'Abc', expected: `abc_${h('Abc')}` },
    { name: 'spaces and punctuation replaced', legacy: 'john.doe@example.com', expected: `john_doe_example_com_${h('john.doe@example.com')}` },
    { name: 'non-ASCII (accent)', legacy: 'José', expected: `jos__${h('José')}` },
    { name: 'non-ASCII (CJK)', legacy: '用户', expected: `___${h('用户')}` },
    { name: 'emoji (astral, 2 UTF-16 units)', legacy: 'a😀', expected: `a___${h('a😀')}` },
    { name: 'Kelvin sign lowercases to ASCII k, still hashed', legacy: '\u212A', expected: `k_${h('\u212A')}` },
    { name: 'empty id', legacy: '', expected: `_${h('')}` },
    { name: '101 valid chars: cut to 90 + hash', legacy: 'b'.repeat(101), expected: `${'b'.repeat(90)}_${h('b'.repeat(101))}` },
    { name: '500 chars with uppercase', legacy: 'X'.repeat(500), expected: `${'x'.repeat(90)}_${h('X'.repeat(500))}` },
  ])('$name', ({ legacy, expected }) => {
    const id = toPlatformId(legacy)
    expect(id).toBe(expected)
    expect(id.length).toBeLessThanOrEqual(100)
    expect(id).toMatch(ID_PATTERN)
    expect(toPlatformId(legacy)).toBe(id) // deterministic
  })

  it.each([
    { name: 'case-only variants', ids: ['ABC', 'Abc', 'aBc', 'abc'] },
    { name: 'ids over 100 chars sharing their first 100', ids: ['q'.repeat(120) + '1', 'q'.repeat(120) + '2', 'q'.repeat(101)] },
    { name: 'non-ASCII ids that clean to the same text', ids: ['é', 'è', 'ê', '_'] },
  ])('$name map to distinct ids', ({ ids }) => {
    expect(new Set(ids.map(toPlatformId)).size).toBe(ids.length)
  })

  it('stableHash is 9 base-36 chars and fixed for known inputs (changing it would change sent ids)', () => {
    expect(h('ABC')).toMatch(/^[0-9a-z]{9}$/)
    expect(h('')).toBe(h(''))
    expect(h('ABC')).not.toBe(h('ABD'))
    expect(h('\uD800')).not.toBe(h('\uD801')) // lone surrogates hash on their own
    expect(toPlatformId('ABC')).toBe('abc_9skeurmja')
  })

  // Values from the first implementation (`Number#toString(36)`), pinned for the faster base-36
  // conversion that replaced it: leading zeros, empty, astral, lone surrogate and long inputs.
  it.each([
    { input: '', hash: 'b6yap3xj7' },
    { input: 'M1', hash: 'k079valu8' },
    { input: 'C00000000:1704186270.000009', hash: 'o8tgmq2uh' },
    { input: '\uD800', hash: 'krwq0hjnp' },
    { input: 'é', hash: 'nz4pfyp5h' },
    { input: 'x'.repeat(500), hash: 'ektjiuypf' },
    { input: 'ABC\u00011', hash: 'mh8b9xebn' },
    { input: 'id1787', hash: '00xg1yjdz' },
    { input: 'id3668', hash: '00o5uz7es' },
  ])('stableHash($input) = $hash', ({ input, hash }) => expect(h(input)).toBe(hash))

  it.each([
    { id: 'abc', valid: true },
    { id: '', valid: false },
    { id: 'ABC', valid: false },
    { id: 'a b', valid: false },
    { id: 'a'.repeat(101), valid: false },
    { id: 'a'.repeat(100), valid: true },
    { id: 'z09_-', valid: true },
    { id: '-', valid: true },
    { id: 'a.b', valid: false },
    { id: 'ab\n', valid: false },
    { id: 'é', valid: false },
  ])('isPlatformId($id) = $valid', ({ id, valid }) => expect(isPlatformId(id)).toBe(valid))

  it('isPlatformId takes exactly the characters of ID_PATTERN, every UTF-16 unit tried', () => {
    const differ: number[] = []
    for (let u = 0; u <= 0xffff; u++) {
      const id = `a${String.fromCharCode(u)}b`
      if (isPlatformId(id) !== ID_PATTERN.test(id)) {
        differ.push(u)
      }
    }
    expect(differ).toEqual([])
  })

  it.each([
    { name: 'muid of a valid id', muid: messageMuid('m1'), expected: 'm1' },
    { name: 'muid of an uppercase id', muid: messageMuid('M1'), expected: `m1_${h('M1')}` },
    { name: 'part muid', muid: partMuid('m1', 2), expected: 'm1-p2' },
    {
      name: 'part muid of a 100-char muid is re-hashed to fit',
      muid: partMuid('m'.repeat(100), 3),
      expected: `${'m'.repeat(90)}_${h(`${'m'.repeat(100)}-p3`)}`,
    },
  ])('$name', ({ muid, expected }) => {
    expect(muid).toBe(expected)
    expect(isPlatformId(muid)).toBe(true)
  })
})

describe('MemoryIdRegistry', () => {
  type Claim = [kind: 'user' | 'group', legacyId: string, candidate?: string]
  const hashedAbc = toPlatformId('ABC') // abc_<hash>

  it.each<{ name: string; claims: Claim[]; expected: string[] }>([
    { name: 'first claim gets its candidate', claims: [['user', 'ABC']], expected: [hashedAbc] },
    {
      name: 'valid ids are kept',
      claims: [
        ['user', 'abc'],
        ['user', 'ABC'],
      ],
      expected: ['abc', hashedAbc],
    },
    {
      name: "collision: a legacy id literally equal to another one's hashed form is re-keyed",
      claims: [
        ['user', 'ABC'],
        ['user', hashedAbc],
      ],
      expected: [hashedAbc, alternativeId(hashedAbc, 1)],
    },
    {
      name: 'collision the other way round: the first claimer keeps the id',
      claims: [
        ['user', hashedAbc],
        ['user', 'ABC'],
      ],
      expected: [hashedAbc, alternativeId('ABC', 1)],
    },
    {
      name: 'two legacy ids proposing the same candidate',
      claims: [
        ['user', 'one', 'same'],
        ['user', 'two', 'same'],
        ['user', 'three', 'same'],
      ],
      expected: ['same', alternativeId('two', 1), alternativeId('three', 1)],
    },
    {
      name: 'alternative also taken: counter advances',
      claims: [
        ['user', 'x', alternativeId('y', 1)],
        ['user', 'z', 'c'],
        ['user', 'y', 'c'],
      ],
      expected: [alternativeId('y', 1), 'c', alternativeId('y', 2)],
    },
    {
      name: 'a repeated claim returns the recorded id, whatever the candidate',
      claims: [
        ['user', 'ABC'],
        ['user', 'ABC', 'other'],
      ],
      expected: [hashedAbc, hashedAbc],
    },
    {
      name: 'kinds are separate namespaces',
      claims: [
        ['user', 'a', 'same'],
        ['group', 'b', 'same'],
      ],
      expected: ['same', 'same'],
    },
    { name: 'an invalid candidate is replaced by an alternative', claims: [['user', 'x', 'NOT VALID']], expected: [alternativeId('x', 1)] },
  ])('$name', ({ claims, expected }) => {
    const reg = new MemoryIdRegistry()
    expect(claims.map(([kind, id, c]) => reg.claim(kind, id, c))).toEqual(expected)
    for (const id of reg.entries().map((e) => e.platformId)) {
      expect(isPlatformId(id)).toBe(true)
    }
  })

  it('persists and reloads: a later run reuses every decision, whatever the claim order', () => {
    const first = new MemoryIdRegistry()
    const a = first.claim('user', 'ABC')
    const b = first.claim('user', hashedAbc)
    const g = first.claim('group', 'Sales Team')
    const persisted: IdMapEntry[] = JSON.parse(JSON.stringify(first.entries()))
    expect(persisted).toEqual([
      { kind: 'user', legacyId: 'ABC', platformId: a },
      { kind: 'user', legacyId: hashedAbc, platformId: b },
      { kind: 'group', legacyId: 'Sales Team', platformId: g },
    ])

    const second = new MemoryIdRegistry(persisted)
    // Opposite order: without the map, hashedAbc would now win its own id.
    expect(second.claim('user', hashedAbc)).toBe(b)
    expect(second.claim('user', 'ABC')).toBe(a)
    expect(second.get('group', 'Sales Team')).toBe(g)
    expect(second.holder('user', b)).toBe(hashedAbc)
    expect(second.takeNew()).toEqual([])
  })

  it('takeNew returns only decisions made since the last call', () => {
    const reg = new MemoryIdRegistry([{ kind: 'user', legacyId: 'old', platformId: 'old' }])
    reg.claim('user', 'a')
    reg.claim('user', 'old')
    expect(reg.takeNew()).toEqual([{ kind: 'user', legacyId: 'a', platformId: 'a' }])
    reg.claim('group', 'b')
    expect(reg.takeNew()).toEqual([{ kind: 'group', legacyId: 'b', platformId: 'b' }])
    expect(reg.takeNew()).toEqual([])
  })

  it.each<{ name: string; entries: IdMapEntry[]; error: RegExp }>([
    {
      name: 'one legacy id with two platform ids',
      entries: [
        { kind: 'user', legacyId: 'a', platformId: 'x' },
        { kind: 'user', legacyId: 'a', platformId: 'y' },
      ],
      error: /is both x and y/,
    },
    {
      name: 'one platform id held by two legacy ids',
      entries: [
        { kind: 'user', legacyId: 'a', platformId: 'x' },
        { kind: 'user', legacyId: 'b', platformId: 'x' },
      ],
      error: /held by both/,
    },
    { name: 'an invalid platform id', entries: [{ kind: 'user', legacyId: 'a', platformId: 'X Y' }], error: /not a valid platform id/ },
  ])('load refuses a corrupted id map: $name', ({ entries, error }) => {
    expect(() => new MemoryIdRegistry(entries)).toThrow(error)
  })

  it('load accepts the same entry twice', () => {
    const e: IdMapEntry = { kind: 'user', legacyId: 'a', platformId: 'a' }
    expect(new MemoryIdRegistry([e, e]).entries()).toEqual([e])
  })
})
