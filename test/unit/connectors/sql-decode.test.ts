import { describe, expect, it } from 'vitest'

import {
  decodeBoolean,
  decodeJson,
  decodeStringList,
  decodeText,
  decodeTimestamp,
  FieldProblem,
  parseSqlTimestamp,
  type TimeFormat,
} from '../../../connectors/sql/decode.ts'

const at = (iso: string) => Date.parse(iso)

describe('decodeTimestamp', () => {
  const cases: { name: string; value: unknown; format?: TimeFormat; want: number | undefined | 'problem' }[] = [
    { name: 'NULL', value: null, want: undefined },
    { name: 'empty text', value: '', want: undefined },
    { name: 'MySQL zero date', value: '0000-00-00 00:00:00', want: undefined },
    { name: 'Postgres timestamp text', value: '2024-01-15 09:00:00.123456', want: at('2024-01-15T09:00:00.123Z') },
    { name: 'timestamptz with short offset', value: '2024-01-15 10:00:00+01', want: at('2024-01-15T09:00:00Z') },
    { name: 'ISO with Z', value: '2024-01-15T09:00:00Z', want: at('2024-01-15T09:00:00Z') },
    { name: 'ISO with offset and ms', value: '2024-02-02T08:00:00.250+01:00', want: at('2024-02-02T07:00:00.250Z') },
    { name: 'negative offset', value: '2024-01-15T04:30:00-04:30', want: at('2024-01-15T09:00:00Z') },
    { name: 'date only', value: '2024-01-15', want: at('2024-01-15T00:00:00Z') },
    { name: 'no seconds', value: '2024-01-15 09:00', want: at('2024-01-15T09:00:00Z') },
    { name: 'leap day', value: '2024-02-29 00:00:00', want: at('2024-02-29T00:00:00Z') },
    { name: 'not a leap year', value: '2023-02-29 00:00:00', want: 'problem' },
    { name: 'February 30th', value: '2024-02-30T10:00:00Z', want: 'problem' },
    { name: 'hour 25', value: '2024-01-15 25:00:00', want: 'problem' },
    { name: 'garbage text', value: 'yesterday', want: 'problem' },
    { name: 'Postgres infinity', value: 'infinity', want: 'problem' },
    { name: 'Date object', value: new Date('2024-01-15T09:00:00Z'), want: at('2024-01-15T09:00:00Z') },
    { name: 'number (auto = ms)', value: 1705309200000, want: 1705309200000 },
    { name: 'epoch seconds', value: 1705309200, format: 'epoch-s', want: 1705309200000 },
    { name: 'fractional epoch seconds', value: 1705309200.5, format: 'epoch-s', want: 1705309200500 },
    { name: 'epoch ms as text (bigint)', value: '1705309200000', format: 'epoch-ms', want: 1705309200000 },
    { name: 'epoch µs', value: 1705309200123456, format: 'epoch-us', want: 1705309200123 },
    { name: 'epoch µs as bigint', value: 1705309200123456n, format: 'epoch-us', want: 1705309200123 },
    { name: 'negative epoch', value: -5, format: 'epoch-ms', want: 'problem' },
    { name: 'beyond year 9999', value: 9e15, format: 'epoch-ms', want: 'problem' },
    { name: 'iso refuses numbers', value: 1705309200, format: 'iso', want: 'problem' },
    { name: 'iso text under epoch-s still parses', value: '2024-01-15T09:00:00Z', format: 'epoch-s', want: at('2024-01-15T09:00:00Z') },
    { name: 'NaN', value: Number.NaN, want: 'problem' },
  ]
  it.each(cases)('$name', ({ value, format, want }) => {
    if (want === 'problem') {
      expect(() => decodeTimestamp('sent_at', value, format)).toThrow(FieldProblem)
      try {
        decodeTimestamp('sent_at', value, format)
      } catch (e) {
        expect((e as FieldProblem).field).toBe('sent_at')
      }
    } else {
      expect(decodeTimestamp('sent_at', value, format)).toBe(want)
    }
  })

  it('parses years below 100 literally', () => {
    expect(parseSqlTimestamp('0099-01-01 00:00:00')).toBe(new Date('0099-01-01T00:00:00Z').getTime())
  })
})

describe('decodeText', () => {
  const cases: { name: string; value: unknown; lossy?: boolean; want: string | undefined | 'problem' }[] = [
    { name: 'text', value: 'héllo', want: 'héllo' },
    { name: 'NULL', value: null, want: undefined },
    { name: 'valid UTF-8 bytes', value: new Uint8Array([0x68, 0xc3, 0xa9]), want: 'hé' },
    { name: 'invalid UTF-8 bytes', value: new Uint8Array([0x48, 0xff]), want: 'problem' },
    { name: 'replacement char from a lossy driver', value: 'A\uFFFDB', lossy: true, want: 'problem' },
    { name: 'replacement char where the engine validated UTF-8', value: 'A\uFFFDB', lossy: false, want: 'A\uFFFDB' },
    { name: 'lone surrogate', value: 'A\uD800B', want: 'problem' },
    { name: 'number', value: 42, want: '42' },
  ]
  it.each(cases)('$name', ({ value, lossy, want }) => {
    if (want === 'problem') {
      expect(() => decodeText('text', value, lossy)).toThrow(/invalid UTF-8/)
    } else {
      expect(decodeText('text', value, lossy)).toBe(want)
    }
  })
})

describe('decodeJson / decodeStringList / decodeBoolean', () => {
  it.each([
    { value: '{"a":1}', want: { a: 1 } },
    { value: { a: 1 }, want: { a: 1 } },
    { value: '', want: undefined },
    { value: null, want: undefined },
    { value: 'null', want: undefined },
    { value: '{}', want: {} },
    { value: ' {} ', want: {} },
  ])('object $value', ({ value, want }) => expect(decodeJson('props', value, 'object')).toEqual(want))
  it.each(['{"a":', '[1]', '"text"', '[]'])('object problem %s', (value) => expect(() => decodeJson('props', value, 'object')).toThrow(FieldProblem))
  it.each([
    { value: '["a","b"]', want: ['a', 'b'] },
    { value: ['a', 'b'], want: ['a', 'b'] },
    { value: 'a, b,,c', want: ['a', 'b', 'c'] },
    { value: '[1,2]', want: ['1', '2'] },
    { value: '', want: undefined },
    { value: '[]', want: [] },
    { value: ' [ ] ', want: [] },
  ])('string list $value', ({ value, want }) => expect(decodeStringList('tags', value)).toEqual(want))
  it.each([
    { value: true, want: true },
    { value: 1, want: true },
    { value: 0, want: false },
    { value: 't', want: true },
    { value: 'false', want: false },
    { value: null, want: false },
  ])('boolean $value', ({ value, want }) => expect(decodeBoolean('b', value)).toBe(want))
  it('boolean problem', () => expect(() => decodeBoolean('b', 'maybe')).toThrow(FieldProblem))
})
