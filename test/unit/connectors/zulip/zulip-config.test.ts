/** The zulip connector's settings: defaults, and every problem of a bad `source:` block at once. */
import { describe, expect, it } from 'vitest'

import { SourceConfigSchema } from '../../../../connectors/index.ts'

describe('source.connector: zulip', () => {
  it('fills the defaults', () => {
    expect(SourceConfigSchema.parse({ connector: 'zulip', url: 'postgres://z@db/zulip', realm: '' })).toEqual({
      connector: 'zulip',
      url: 'postgres://z@db/zulip',
      realm: '',
      pageSize: 1000,
      connectTimeoutMs: 10_000,
      topics: 'metadata',
      archivedMessages: 'skip',
      fileBaseUrl: 'file:///home/zulip/uploads/files',
    })
  })
  it.each([
    [{ url: 'mysql://z@db/zulip', realm: 'acme' }, ['url']],
    [{ url: 'postgres://z@db/zulip' }, ['realm']],
    [
      { url: 'postgres://z@db/zulip', realm: 'acme', topics: 'threads', archivedMessages: 'yes', siteUrl: 'nope', extra: 1 },
      ['topics', 'archivedMessages', 'siteUrl', ''],
    ],
  ])('%j is refused, naming %j', (settings, paths) => {
    const r = SourceConfigSchema.safeParse({ connector: 'zulip', ...settings })
    expect(r.success).toBe(false)
    expect(r.error?.issues.map((i) => i.path.join('.')).sort()).toEqual([...paths].sort())
  })
})
