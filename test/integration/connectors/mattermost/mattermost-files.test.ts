/**
 * Mattermost's files (connectors/mattermost, `source.files`): over the Mattermost fixture
 * (test/fixtures/mattermost, Postgres), each attachment carries the locator `{reader: mattermost,
 * ref: FileInfo.Path}` and the connector's reader returns the exact bytes from the data directory
 * (`FileSettings.Directory`) or from the bucket under `AmazonS3PathPrefix` (s3rver); a resumed
 * read starts at its offset; a file gone from the store is `missing`; a FileInfo path walking out
 * of the data directory is `denied`; a data directory that does not exist is a configuration
 * error naming `source.files.directory`. Without `source.files` nothing changes (no locator).
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type { MattermostConfigInput } from '../../../../connectors/mattermost/config.ts'
import { createMattermostConnector, MattermostConfigSchema } from '../../../../connectors/mattermost/index.ts'
import { loadMattermostFixture, openFixtureWriter } from '../../../fixtures/mattermost/load.ts'
import { attachmentsOf, openFailure, readRef, sha256 } from '../../../helpers/connector-files.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { type SourceBucket, startSourceBucket } from '../../../helpers/source-bucket.ts'

/** The fixture's live files (f01img, f02doc, f03img), with bytes of their own. */
const FILES: Record<string, Buffer> = {
  '20240115/teams/t01eng/channels/c01town/users/u01alice/f01img/diagram.png': randomBytes(2048),
  '20240115/teams/t01eng/channels/c01town/users/u01alice/f02doc/Q1 plan.pdf': randomBytes(40960),
}
/** In the fixture, absent from the store. */
const GONE = '20240115/teams/t01eng/channels/c01town/users/u02bob/f03img/cat.jpg'
const ESCAPE = '../../../etc/passwd'

let db: TestDatabase
const root = mkdtempSync(join(tmpdir(), 'cf-mm-files-'))
const dataDir = join(root, 'mattermost/data')
let bucket: SourceBucket

beforeAll(async () => {
  db = await createTestDatabase('cf_mm_files')
  await loadMattermostFixture('postgres', db.url)
  const w = await openFixtureWriter('postgres', db.url)
  // A post whose FileInfo.Path walks out of the data directory (a damaged or hostile row).
  await w.exec(`UPDATE fileinfo SET path = '${ESCAPE}' WHERE id = 'f05gone'`)
  await w.exec(`UPDATE fileinfo SET deleteat = 0 WHERE id = 'f05gone'`)
  await w.close()
  for (const [path, bytes] of Object.entries(FILES)) {
    mkdirSync(dirname(join(dataDir, path)), { recursive: true })
    writeFileSync(join(dataDir, path), bytes)
  }
  writeFileSync(join(root, 'mattermost/secret.txt'), 'outside')
  bucket = await startSourceBucket('mattermost-files')
  for (const [path, bytes] of Object.entries(FILES)) {
    await bucket.put(`prod/mm/${path}`, bytes)
  }
}, 60_000)

afterAll(async () => {
  await bucket?.stop()
  await db?.drop()
  rmSync(root, { recursive: true, force: true })
})

const connector = (extra: Partial<MattermostConfigInput>) =>
  createMattermostConnector(MattermostConfigSchema.parse({ connector: 'mattermost', url: db.url, ...extra }))

describe.each([
  ['the data directory', () => ({ kind: 'local' as const, directory: dataDir }), 'local'],
  ['the S3 bucket', () => ({ ...bucket.settings, prefix: 'prod/mm' }), '127.0.0.1'],
])('Mattermost files from %s', (_what, files, host) => {
  it('every attachment carries its FileInfo.Path as the locator; the reader returns its exact bytes', async () => {
    const c = connector({ files: files() })
    const found = await attachmentsOf(c)
    const refs = found.map((f) => f.attachment.source?.ref).sort()
    expect(refs).toEqual([...Object.keys(FILES), ESCAPE, GONE].sort())
    for (const { attachment } of found) {
      expect(attachment.source?.reader).toBe('mattermost')
      expect(attachment.source?.host.startsWith(host)).toBe(true)
    }
    const reader = c.files!()
    try {
      for (const [path, bytes] of Object.entries(FILES)) {
        const got = await readRef(reader, path)
        expect([got.size, got.start, sha256(got.bytes)]).toEqual([bytes.length, 0, sha256(bytes)])
      }
    } finally {
      await reader.close?.()
    }
  })

  it('resumes from an offset', async () => {
    const reader = connector({ files: files() }).files!()
    const [path, bytes] = Object.entries(FILES)[1]!
    const got = await readRef(reader, path, 40000)
    await reader.close?.()
    expect([got.start, sha256(got.bytes)]).toEqual([40000, sha256(bytes.subarray(40000))])
  })

  it('a file not in the store is missing; a path out of the data directory is denied', async () => {
    const reader = connector({ files: files() }).files!()
    try {
      expect((await openFailure(reader, GONE)).fileCause).toBe('missing')
      const denied = await openFailure(reader, ESCAPE)
      expect(denied.fileCause).toBe('denied')
      expect(denied.message).toMatch(/'\.\.'/)
    } finally {
      await reader.close?.()
    }
  })
})

describe('Mattermost files: configuration', () => {
  it('a data directory that does not exist is a configuration error naming the field, before any read', () => {
    const c = connector({ files: { kind: 'local', directory: join(root, 'no-such-dir') } })
    expect(() => c.files!()).toThrow(/source\.files\.directory: .*no-such-dir does not exist/)
  })

  it('without source.files, attachments carry no locator and the connector has no reader', async () => {
    const c = connector({})
    expect(c.files).toBeUndefined()
    const found = await attachmentsOf(c)
    expect(found.length).toBeGreaterThan(0)
    expect(found.every((f) => f.attachment.source === undefined)).toBe(true)
  })

  it('S3 keys go together', () => {
    const r = MattermostConfigSchema.safeParse({
      connector: 'mattermost',
      url: 'postgres://x@h/db',
      files: { kind: 's3', bucket: 'b', accessKeyId: 'k' },
    })
    expect(r.success).toBe(false)
  })
})
