/**
 * Zulip's files (connectors/zulip, `source.files`): over the Zulip fixture (test/fixtures/zulip,
 * Postgres), each attachment carries `{reader: zulip, ref: zerver_attachment.path_id}` and the
 * reader returns the exact bytes from `<LOCAL_UPLOADS_DIR>/files/<path_id>` or from the
 * `S3_AUTH_UPLOADS_BUCKET` key `path_id` (s3rver), from an offset too; a file not in the store is
 * `missing`; a path_id walking out of the uploads directory is `denied`; an uploads directory
 * without `files/` is a configuration error naming `source.files.directory`.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createZulipConnector, type ZulipConfigInput, ZulipConfigSchema } from '../../../../connectors/zulip/index.ts'
import { loadZulipFixture, openZulipWriter, REALM, ZU } from '../../../fixtures/zulip/load.ts'
import { attachmentsOf, openFailure, readRef, sha256 } from '../../../helpers/connector-files.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { type SourceBucket, startSourceBucket } from '../../../helpers/source-bucket.ts'

const LOGO = '2/ab/cdEF/logo.png'
const MINUTES = '2/ef/ghIJ/minutes.pdf'
const ESCAPE = '../../etc/passwd'
const BYTES = randomBytes(2048)

let db: TestDatabase
let bucket: SourceBucket
const root = mkdtempSync(join(tmpdir(), 'cf-zulip-files-'))
const uploads = join(root, 'uploads')

beforeAll(async () => {
  db = await createTestDatabase('cf_zulip_files')
  await loadZulipFixture(db.url)
  const w = await openZulipWriter(db.url)
  await w.insert('zerver_attachment', [
    {
      id: 3,
      file_name: 'passwd',
      path_id: ESCAPE,
      owner_id: ZU.carol,
      realm_id: REALM.acme,
      size: 1,
      deleted: false,
      is_realm_public: false,
      is_web_public: false,
      create_time: new Date(0).toISOString(),
    },
  ])
  await w.insert('zerver_attachment_messages', [{ id: 3, attachment_id: 3, message_id: 1004 }])
  await w.close()
  mkdirSync(dirname(join(uploads, 'files', LOGO)), { recursive: true })
  writeFileSync(join(uploads, 'files', LOGO), BYTES)
  bucket = await startSourceBucket('zulip-uploads')
  await bucket.put(LOGO, BYTES)
}, 60_000)

afterAll(async () => {
  await bucket?.stop()
  await db?.drop()
  rmSync(root, { recursive: true, force: true })
})

const connector = (extra: Partial<ZulipConfigInput>) =>
  createZulipConnector(ZulipConfigSchema.parse({ connector: 'zulip', url: db.url, realm: 'acme', archivedMessages: 'read', ...extra }))

describe.each([
  ['LOCAL_UPLOADS_DIR', () => ({ kind: 'local' as const, directory: uploads }), 'local'],
  ['S3_AUTH_UPLOADS_BUCKET', () => bucket.settings, '127.0.0.1'],
])('Zulip files from %s', (_what, files, host) => {
  it('every attachment carries its path_id; the reader returns the exact bytes, from an offset too', async () => {
    const c = connector({ files: files() })
    const found = await attachmentsOf(c)
    expect(found.map((f) => f.attachment.source?.ref).sort()).toEqual([ESCAPE, LOGO, MINUTES].sort())
    expect(found.every((f) => f.attachment.source?.reader === 'zulip' && f.attachment.source.host.startsWith(host))).toBe(true)
    const reader = c.files!()
    try {
      const whole = await readRef(reader, LOGO)
      expect([whole.size, sha256(whole.bytes)]).toEqual([BYTES.length, sha256(BYTES)])
      const tail = await readRef(reader, LOGO, 1000)
      expect([tail.start, sha256(tail.bytes)]).toEqual([1000, sha256(BYTES.subarray(1000))])
      expect((await openFailure(reader, MINUTES)).fileCause).toBe('missing')
      expect((await openFailure(reader, ESCAPE)).fileCause).toBe('denied')
    } finally {
      await reader.close?.()
    }
  })
})

describe('Zulip files: configuration', () => {
  it('an uploads directory without files/ is a configuration error naming the field', () => {
    mkdirSync(join(root, 'empty'), { recursive: true })
    expect(() => connector({ files: { kind: 'local', directory: join(root, 'empty') } }).files!()).toThrow(
      /source\.files\.directory: .*empty\/files does not exist/,
    )
  })

  it('without source.files, no locator and no reader', async () => {
    const c = connector({})
    expect(c.files).toBeUndefined()
    expect((await attachmentsOf(c)).every((f) => f.attachment.source === undefined)).toBe(true)
  })
})
