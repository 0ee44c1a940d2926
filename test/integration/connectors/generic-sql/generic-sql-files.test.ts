/**
 * The generic-sql connector's files (`source.files`, connectors/generic-sql/files.ts), over the
 * SQLite fixture (test/fixtures/generic-sql) whose `chat_lines.files` JSON gains a `path`, a
 * `key` and a `download` key: with `kind: local` the attachment's locator is the path (an absolute
 * path inside the directory taken relative to it) and the reader returns its exact bytes from the
 * directory, from an offset too; a path out of the directory is `denied`, a file not there
 * `missing`, a directory that does not exist a configuration error; `kind: s3` reads the key
 * from a bucket (s3rver); `kind: url` names the download URL (the shared `http` reader without a
 * token, this connector's bearer reader with one).
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { GenericSqlConfigSchema } from '../../../../connectors/generic-sql/config.ts'
import { createGenericSqlConnector } from '../../../../connectors/generic-sql/index.ts'
import { genericSourceConfig, loadGenericSqlFixture, openGenericWriter } from '../../../fixtures/generic-sql/fixture.ts'
import { attachmentsOf, openFailure, readRef, sha256 } from '../../../helpers/connector-files.ts'
import { type SourceBucket, startSourceBucket } from '../../../helpers/source-bucket.ts'

const dir = mkdtempSync(join(tmpdir(), 'cf-generic-files-'))
const uploads = join(dir, 'uploads')
const url = `sqlite:${join(dir, 'legacy.db')}`
const CHART = randomBytes(123)
const BIG = randomBytes(500_000)
let bucket: SourceBucket

beforeAll(async () => {
  await loadGenericSqlFixture('sqlite', url)
  const w = await openGenericWriter('sqlite', url)
  const files = [
    {
      url: 'https://files.example.com/a/chart.png',
      mimeType: 'image/png',
      size: 123,
      path: '2024/03/chart.png',
      key: 'att/chart.png',
      download: 'https://dl.example.com/chart.png?id=7',
    },
    { url: 'https://files.example.com/a/big.bin', size: BIG.length, path: join(uploads, '2024/03/big.bin'), key: 'att/big.bin' },
    { url: 'https://files.example.com/a/gone.bin', path: '2024/03/gone.bin', key: 'att/gone.bin' },
    { url: 'https://files.example.com/a/evil', path: '../../etc/passwd', key: '../evil' },
    { url: 'https://files.example.com/a/none.bin' },
  ]
  await w.exec(`UPDATE chat_lines SET files = '${JSON.stringify(files)}' WHERE lid = 7`)
  await w.close()
  mkdirSync(join(uploads, '2024/03'), { recursive: true })
  writeFileSync(join(uploads, '2024/03/chart.png'), CHART)
  writeFileSync(join(uploads, '2024/03/big.bin'), BIG)
  bucket = await startSourceBucket('generic-files')
  await bucket.put('chat/att/chart.png', CHART)
  await bucket.put('chat/att/big.bin', BIG)
})

afterAll(async () => {
  await bucket?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const connector = (files?: unknown) =>
  createGenericSqlConnector(GenericSqlConfigSchema.parse({ ...genericSourceConfig(url), ...(files === undefined ? {} : { files }) }))
const sources = async (files?: unknown) => (await attachmentsOf(connector(files))).map((a) => a.attachment.source)

describe('generic-sql files, kind: local', () => {
  const files = () => ({ kind: 'local', directory: uploads })

  it('the path key is the locator (an absolute path inside the directory made relative); none without the key', async () => {
    expect(await sources(files())).toEqual([
      { reader: 'generic-sql', ref: '2024/03/chart.png', host: 'local' },
      { reader: 'generic-sql', ref: '2024/03/big.bin', host: 'local' },
      { reader: 'generic-sql', ref: '2024/03/gone.bin', host: 'local' },
      { reader: 'generic-sql', ref: '../../etc/passwd', host: 'local' },
      undefined,
    ])
  })

  it('the reader returns the exact bytes, and resumes from an offset', async () => {
    const reader = connector(files()).files!()
    const chart = await readRef(reader, '2024/03/chart.png')
    expect([chart.size, sha256(chart.bytes)]).toEqual([CHART.length, sha256(CHART)])
    const tail = await readRef(reader, '2024/03/big.bin', 400_001)
    expect([tail.start, sha256(tail.bytes)]).toEqual([400_001, sha256(BIG.subarray(400_001))])
  })

  it('missing and traversal', async () => {
    const reader = connector(files()).files!()
    expect((await openFailure(reader, '2024/03/gone.bin')).fileCause).toBe('missing')
    expect((await openFailure(reader, '../../etc/passwd')).fileCause).toBe('denied')
  })

  it('a directory that does not exist is a configuration error naming source.files.directory', () => {
    expect(() => connector({ kind: 'local', directory: join(dir, 'nope') }).files!()).toThrow(/source\.files\.directory: .*nope does not exist/)
  })
})

describe('generic-sql files, kind: s3', () => {
  it('the key is the locator; the reader returns the bytes under the prefix, with Range; missing and traversal', async () => {
    const files = { ...bucket.settings, prefix: 'chat' }
    expect((await sources(files)).map((s) => s?.ref)).toEqual(['att/chart.png', 'att/big.bin', 'att/gone.bin', '../evil', undefined])
    const reader = connector(files).files!()
    try {
      expect(sha256((await readRef(reader, 'att/chart.png')).bytes)).toBe(sha256(CHART))
      const tail = await readRef(reader, 'att/big.bin', 1000)
      expect([tail.size, tail.start, sha256(tail.bytes)]).toEqual([BIG.length, 1000, sha256(BIG.subarray(1000))])
      expect((await openFailure(reader, 'att/gone.bin')).fileCause).toBe('missing')
      expect((await openFailure(reader, '../evil')).fileCause).toBe('denied')
    } finally {
      await reader.close?.()
    }
  })
})

describe('generic-sql files, kind: url', () => {
  it('the download key is the locator: the shared http reader without a token, this connector with one', async () => {
    expect((await sources({ kind: 'url', field: 'download' }))[0]).toEqual({
      reader: 'http',
      ref: 'https://dl.example.com/chart.png?id=7',
      host: 'dl.example.com',
    })
    expect((await sources({ kind: 'url', field: 'download', token: 'secret-token' }))[0]?.reader).toBe('generic-sql')
  })

  it('without source.files nothing changes: no locator, no reader', async () => {
    expect((await sources()).every((s) => s === undefined)).toBe(true)
    expect(connector().files).toBeUndefined()
  })
})
