/** Table tests of the Slack export connector's pure parts: text, file URLs, timestamps, names, the JSON array splitter, config. */
import { Readable } from 'node:stream'

import { describe, expect, it } from 'vitest'

import { jsonArrayItems } from '../../../../connectors/archive/json-array.ts'
import { SlackExportConfigSchema } from '../../../../connectors/slack-export/config.ts'
import { compareTs, isTs, tsMs } from '../../../../connectors/slack-export/entities/fields.ts'
import { mpimDisplayName } from '../../../../connectors/slack-export/entities/groups.ts'
import { filesOf, withoutToken } from '../../../../connectors/slack-export/entities/message-files.ts'
import { convertText } from '../../../../connectors/slack-export/entities/message-text.ts'
import { decodeMessage } from '../../../../connectors/slack-export/entities/messages.ts'
import { withoutSecrets } from '../../../../connectors/slack-export/entities/url-secrets.ts'

const lookups = {
  handleOf: (id: string) => ({ U1: 'alice', U2: 'bob.b' })[id],
  channelNameOf: (id: string) => ({ C1: 'general' })[id],
}

describe('convertText', () => {
  it.each([
    ['plain', 'plain', [], {}, []],
    ['a &lt;b&gt; &amp; c', 'a <b> & c', [], {}, []],
    ['hi <@U1>', 'hi @alice', ['U1'], { alice: 'U1' }, []],
    ['hi <@U2|bob>!', 'hi @bob.b!', ['U2'], { 'bob.b': 'U2' }, []],
    ['<@U9|ghost> and <@U8>', '@ghost and @U8', ['U9', 'U8'], {}, []],
    ['<@U1> <@U1>', '@alice @alice', ['U1'], { alice: 'U1' }, []],
    ['<!here> <!channel|@channel> <!everyone>', '@here @channel @everyone', [], {}, ['here', 'channel', 'everyone']],
    ['in <#C1> and <#C2|random> and <#C3>', 'in #general and #random and #C3', [], {}, []],
    ['<!subteam^S1|@eng> <!subteam^S2>', '@eng @group', [], {}, []],
    ['<!date^1392734382^{date}|Feb 18, 2014>', 'Feb 18, 2014', [], {}, []],
    ['due <!date^1392734382^{date}> ok', 'due <!date^1392734382^{date}> ok', [], {}, []],
    ['<https://x.example/a?b=1&amp;c=2|the plan>', 'the plan (https://x.example/a?b=1&c=2)', [], {}, []],
    ['<https://x.example>', 'https://x.example', [], {}, []],
    ['<https://x.example|https://x.example>', 'https://x.example', [], {}, []],
    ['<mailto:a@b.example|a@b.example>', 'a@b.example', [], {}, []],
    ['<mailto:a@b.example|Ann>', 'Ann (mailto:a@b.example)', [], {}, []],
    ['<https://x.example|>', 'https://x.example', [], {}, []],
    ['<#C1|> and <#C2|>', '#general and #C2', [], {}, []],
    ['a < b > c', 'a < b > c', [], {}, []],
  ])('%s', (raw, text, mentions, handles, channelMentions) => {
    expect(convertText(raw, lookups)).toEqual({ text, mentions, handles, channelMentions })
  })
})

describe('withoutToken', () => {
  it.each([
    ['https://files.slack.com/files-pri/T1-F1/a.png?t=xoxe-123', 'https://files.slack.com/files-pri/T1-F1/a.png'],
    ['https://files.slack.com/files-pri/T1-F1/a.png?t=xoxe-123&v=2', 'https://files.slack.com/files-pri/T1-F1/a.png?v=2'],
    ['https://files.slack.com/files-pri/T1-F1/a.png', 'https://files.slack.com/files-pri/T1-F1/a.png'],
    ['https://docs.example/d?id=1', 'https://docs.example/d?id=1'],
    // Current exports spell it `token` on files-pri/ URLs; a public link carries pub_secret.
    ['https://files.slack.com/files-pri/T1-F1/a.pdf?token=xoxe-123', 'https://files.slack.com/files-pri/T1-F1/a.pdf'],
    ['https://files.slack.com/files-pri/T1-F1/a.pdf?origin_team=T1&token=xoxe-123', 'https://files.slack.com/files-pri/T1-F1/a.pdf?origin_team=T1'],
    ['https://slack-files.com/T1-F1-abc?pub_secret=0a1b', 'https://slack-files.com/T1-F1-abc'],
    ['https://cdn.example/a.png?sig=xoxp-99-abc', 'https://cdn.example/a.png'],
    ['not a url ?token=xoxe-1&v=2', 'not a url ?v=2'],
    // No `?` but an `&`: not skipped as a URL without a query.
    ['not a url &token=xoxe-1', 'not a url '],
  ])('%s', (url, want) => {
    expect(withoutToken(url)).toBe(want)
  })
})

describe('withoutSecrets (links, avatars)', () => {
  it.each([
    ['https://files.slack.com/files-pri/T1-F1/a.png?t=xoxe-123', 'https://files.slack.com/files-pri/T1-F1/a.png'],
    ['https://example.slack.com/archives/C1/p1?thread_ts=1.2&token=xoxe-1', 'https://example.slack.com/archives/C1/p1?thread_ts=1.2'],
    ['https://video.example/v?t=42', 'https://video.example/v?t=42'],
    ['https://api.example/x?access=xoxb-1-2', 'https://api.example/x'],
  ])('%s', (url, want) => {
    expect(withoutSecrets(url)).toBe(want)
  })

  it('a link and its URL label lose the token in the text', () => {
    const url = 'https://files.slack.com/files-pri/T1-F1/a.png?token=xoxe-9'
    expect(convertText(`<${url}|${url}> <${url}|a.png>`, lookups).text).toBe(
      'https://files.slack.com/files-pri/T1-F1/a.png a.png (https://files.slack.com/files-pri/T1-F1/a.png)',
    )
  })
})

describe('timestamps', () => {
  it.each([
    ['1503435956.000247', 1503435956000],
    ['1503435956.999999', 1503435956999],
    ['1503435956.5', 1503435956500],
    ['1503435956', 1503435956000],
  ])('tsMs(%s)', (ts, ms) => {
    expect(tsMs('ts', ts)).toBe(ms)
  })
  it.each(['', 'yesterday', '1.2.3', '-5.000001', 12 as unknown as string])('tsMs rejects %s naming the field', (ts) => {
    expect(() => tsMs('thread_ts', ts)).toThrow(/thread_ts/)
  })
  it('isTs takes exactly 1–12 digits, then optionally a dot and 1–6 digits (every string of up to 20 of "0", "9", ".", "a", "٣" by length class)', () => {
    // The README's rule as a pattern, the reference the loop is held to.
    const rule = /^\d{1,12}(\.\d{1,6})?$/
    const alphabet = ['0', '9', '.', 'a', '٣', '/', ':']
    const tried: string[] = ['', '1.', '.1', '1..1', '123456789012', '1234567890123', '1.123456', '1.1234567', ' 1', '1 ', '1\n']
    for (let len = 1; len <= 20; len++) {
      for (let k = 0; k < 400; k++) {
        // Mostly digits, so that the long valid and nearly valid strings are tried too.
        tried.push(
          Array.from({ length: len }, (_, i) => ((k * 31 + i * 7) % 11 < 9 ? String((k + i) % 10) : alphabet[(k + i) % alphabet.length])).join(''),
        )
      }
    }
    expect(tried.filter((t) => isTs(t) !== rule.test(t))).toEqual([])
    expect(tried.filter((t) => isTs(t)).length).toBeGreaterThan(1000)
    expect([undefined, null, 5, ['1']].map((v) => isTs(v))).toEqual([false, false, false, false])
  })
  it('compares exactly, microseconds included', () => {
    expect(compareTs('1503435956.000247', '1503435956.000248')).toBeLessThan(0)
    expect(compareTs('1503435957.000000', '1503435956.999999')).toBeGreaterThan(0)
    expect(compareTs('1503435956.5', '1503435956.500000')).toBe(0)
  })
  it.each([
    // Past 2255 a ts as one number is no longer exact: compared by its parts instead.
    ['999999999999.000001', '999999999999.000002', -1],
    ['999999999999.1', '999999999999.100000', 0],
    ['999999999999.000002', '9999999999.999999', 1],
    ['1', '1.000001', -1],
  ])('compareTs(%s, %s) has the sign %d', (a, b, sign) => {
    expect(Math.sign(compareTs(a, b))).toBe(sign)
  })
})

describe('mpimDisplayName', () => {
  it.each([
    ['mpdm-alice--bob--carol-1', 'alice, bob, carol'],
    ['mpdm-a.b--c_d-12', 'a.b, c_d'],
    ['general', undefined],
  ])('%s', (name, want) => {
    expect(mpimDisplayName(name)).toBe(want)
  })
})

describe('jsonArrayItems: the same items whatever the chunk size', () => {
  const run = async (text: string, size: number) => {
    const bytes = Buffer.from(text)
    const chunks: Buffer[] = []
    for (let i = 0; i < bytes.length; i += size) {
      chunks.push(bytes.subarray(i, i + size))
    }
    const out = []
    for await (const item of jsonArrayItems(Readable.from(chunks))) {
      out.push(item)
    }
    return out
  }
  it.each([
    ['[{"a":"x,]}"},{"b":[1,2]} , 3, "q\\"]"]', ['{"a":"x,]}"}', '{"b":[1,2]}', '3', '"q\\"]"'], undefined],
    ['\ufeff [ {"é":"ü"} ]', ['{"é":"ü"}'], undefined],
    ['[1,,2]', ['1', '', '2'], undefined],
    ['[{"a":1},{"b":', ['{"a":1}'], 'the file breaks off before the array closes'],
    ['', [], 'the file is empty'],
    ['{"a":1}', [], 'the file is not a JSON array'],
    [' \n[]', [], undefined],
    ['[1] \n', ['1'], undefined],
    // A second array after the first (files concatenated): its elements must not vanish silently.
    ['[{"a":1}]\n[{"b":2}]', ['{"a":1}'], 'content after the array closes: the rest of the file cannot be read'],
    ['[1]x', ['1'], 'content after the array closes: the rest of the file cannot be read'],
  ])('%j', async (text, elements, broken) => {
    for (const size of [1, 2, 3, 7, 1000]) {
      const items = await run(text, size)
      expect(items.filter((i) => i.kind === 'element').map((i) => (i.kind === 'element' ? i.text : ''))).toEqual(elements)
      const last = items.at(-1)
      expect(last?.kind === 'broken' ? last.reason : undefined).toBe(broken)
    }
  })
})

describe('SlackExportConfigSchema', () => {
  it('takes a path and defaults the rest', () => {
    expect(SlackExportConfigSchema.parse({ connector: 'slack-export', path: 'x.zip' })).toEqual({
      connector: 'slack-export',
      path: 'x.zip',
      pageSize: 1000,
      maxEntryBytes: 4 * 1024 ** 3,
      maxArchiveBytes: 64 * 1024 ** 3,
      maxElementBytes: 64 * 1024 ** 2,
    })
  })
  it.each([
    [{ path: '' }, 'path'],
    [{ path: 'x', fileUrl: 'https://f.example/{id}/{size}' }, 'fileUrl'],
    [{ path: 'x', fileUrl: 'https://f.example/static' }, 'fileUrl'],
    [{ path: 'x', pageSize: 0 }, 'pageSize'],
    [{ path: 'x', maxEntryBytes: 0 }, 'maxEntryBytes'],
    [{ path: 'x', maxArchiveBytes: '1GiB' }, 'maxArchiveBytes'],
    [{ path: 'x', maxElementBytes: 1.5 }, 'maxElementBytes'],
    [{ path: 'x', url: 'postgres://x' }, ''],
  ])('refuses %j', (o, path) => {
    const r = SlackExportConfigSchema.safeParse({ connector: 'slack-export', ...o })
    expect(r.success).toBe(false)
    expect(r.error?.issues.map((i) => i.path.join('.'))).toContain(path)
  })
})

describe('nothing of a message vanishes without a word', () => {
  const ctx = { ...lookups, conversation: { id: 'C1', kind: 'channel' as const, folder: 'general' } }
  const base = { type: 'message', user: 'U1', text: 'hi', ts: '1700000000.000100' }

  // Slack's `users` may list fewer reactors than `count` (reactions.get: "might not always contain
  // all users that have reacted … count … may be greater than users.length").
  it.each([
    ['users lists every reactor', [{ name: '+1', users: ['U1', 'U2'], count: 2 }], 2, undefined],
    ['users lists fewer than count', [{ name: '+1', users: ['U1', 'U2'], count: 50 }], 2, [{ emoji: '+1', count: 48 }]],
    ['users empty, count 3', [{ name: 'tada', users: [], count: 3 }], 0, [{ emoji: 'tada', count: 3 }]],
    ['no count', [{ name: 'eyes', users: ['U2'] }], 1, undefined],
  ])('reactions: %s', (_, reactions, listed, unlisted) => {
    const m = decodeMessage({ ...base, reactions }, ctx)
    expect(m.reactions?.length ?? 0).toBe(listed)
    expect(m.metadata?.unlistedReactions).toEqual(unlisted)
  })

  it('files nested in attachments (bot and unfurl posts) are attachments too, without the token', () => {
    const nested = { id: 'F3', name: 'log.txt', url_private: 'https://files.slack.com/files-pri/T1-F3/log.txt?token=xoxe-1' }
    const files = filesOf(
      { files: [{ id: 'F2', name: 'a.png', url_private: 'https://files.slack.com/a.png' }], attachments: [{ text: 'x', files: [nested] }] },
      { conversationId: 'C1' },
    )
    expect(files?.attachments.map((a) => a.url)).toEqual(['https://files.slack.com/a.png', 'https://files.slack.com/files-pri/T1-F3/log.txt'])
  })

  it('a files entry that is not an object is listed as unavailable, not dropped', () => {
    const files = filesOf({ files: ['F1', { id: 'F2', name: 'a.png', url_private: 'https://files.slack.com/a.png' }] }, { conversationId: 'C1' })
    expect(files?.attachments.map((a) => a.name)).toEqual(['a.png'])
    expect(files?.unavailable).toEqual([{ id: '?', reason: 'not a file object' }])
  })
})
