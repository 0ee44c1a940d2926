/**
 * Issue 28, item 7: a sample configuration for every connector, each passing `chatferry config
 * check`; and the generic-sql recipes (connectors/generic-sql/README.md#recipes) proven by running
 * exactly the queries of deploy/samples/generic-sql.yaml against such a schema on Postgres, through
 * the CLI as a process into the sandbox: direct messages stored as rooms of two arrive as
 * one-to-one messages to the other member (a room of one is rejected: `receiver_id: is null`), a
 * soft-deleted account is deactivated and a soft-deleted post a tombstone, a reply names its
 * parent, the newest revision of a history table is the text, and a revision made after the load
 * reaches the platform through `run --delta`.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'

import { CONNECTOR_IDS } from '../../../../connectors/index.ts'
import { useCliSuite } from '../../../helpers/cli-suite.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { sandboxContents } from '../../../helpers/run-e2e.ts'

const SAMPLES = resolve(import.meta.dirname, '../../../../deploy/samples')
const suite = useCliSuite()

describe('deploy/samples', () => {
  it('one sample per connector, each valid for `chatferry config check`', async () => {
    const files = readdirSync(SAMPLES).filter((f) => f.endsWith('.yaml'))
    const connectors = files.map((f) => (parse(readFileSync(join(SAMPLES, f), 'utf8')) as { source: { connector: string } }).source.connector)
    // Every connector of the registry has a sample (some have two: an export and an API one).
    expect([...new Set(connectors)].sort()).toEqual([...CONNECTOR_IDS].sort())
    for (const f of files) {
      // The passwords the samples take from the environment.
      const env = Object.fromEntries(
        [...readFileSync(join(SAMPLES, f), 'utf8').matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((m) => [m[1]!, 'sample-password']),
      )
      const r = await runCli(['config', 'check', '-c', join(SAMPLES, f)], env).done
      expect(r.code, `${f}: ${r.stderr}`).toBe(0)
      expect(r.stdout).toContain(`${join(SAMPLES, f)}: valid`)
    }
  }, 60_000)
})

const SCHEMA = `
  CREATE TABLE accounts (id integer PRIMARY KEY, display_name text NOT NULL, email text, created_at timestamptz NOT NULL, deleted_at timestamptz);
  CREATE TABLE rooms (id integer PRIMARY KEY, title text, is_direct boolean NOT NULL, created_by integer, created_at timestamptz NOT NULL);
  CREATE TABLE room_members (room_id integer, account_id integer, joined_at timestamptz, PRIMARY KEY (room_id, account_id));
  CREATE TABLE posts (id integer PRIMARY KEY, room_id integer NOT NULL, author_id integer NOT NULL, body text, created_at timestamptz NOT NULL,
                      parent_id integer, is_deleted boolean NOT NULL DEFAULT false, deleted_at timestamptz);
  CREATE TABLE post_revisions (post_id integer, body text, revised_at timestamptz NOT NULL);
  INSERT INTO accounts VALUES (1, 'Ada', 'ada@example.com', '2024-01-01Z', NULL), (2, 'Bob', NULL, '2024-01-01Z', NULL),
                              (3, 'Cy', NULL, '2024-01-01Z', '2024-02-01Z'), (4, 'Dee', NULL, '2024-01-01Z', NULL);
  INSERT INTO rooms VALUES (10, 'General', false, 1, '2024-01-02Z'), (20, NULL, true, 1, '2024-01-02Z'), (30, NULL, true, 4, '2024-01-02Z');
  INSERT INTO room_members VALUES (10, 1, '2024-01-02Z'), (10, 2, '2024-01-02Z'), (10, 3, '2024-01-02Z'), (20, 1, '2024-01-02Z'),
                                  (20, 2, '2024-01-02Z'), (30, 4, '2024-01-02Z');
  INSERT INTO posts (id, room_id, author_id, body, created_at, parent_id, is_deleted, deleted_at) VALUES
    (100, 10, 1, 'Hello all', '2024-03-01 10:00Z', NULL, false, NULL),
    (101, 10, 2, 'a reply', '2024-03-01 10:01Z', 100, false, NULL),
    (102, 20, 1, 'psst, Bob', '2024-03-01 10:02Z', NULL, false, NULL),
    (103, 20, 2, 'hi Ada', '2024-03-01 10:03Z', NULL, false, NULL),
    (104, 10, 1, 'oops', '2024-03-01 10:04Z', NULL, true, '2024-03-01 10:05Z'),
    (105, 10, 2, 'first draft', '2024-03-01 10:06Z', NULL, false, NULL),
    (106, 30, 4, 'note to self', '2024-03-01 10:07Z', NULL, false, NULL);
  INSERT INTO post_revisions VALUES (105, 'second draft', '2024-03-01 10:08Z'), (105, 'final', '2024-03-01 10:09Z');
`

describe('the generic-sql recipes', () => {
  it("deploy/samples/generic-sql.yaml's queries on such a schema: DMs, soft deletes, threads, edit history, and an edit after the load", async () => {
    const source = await suite.freshDb('cf_recipes_src')
    const sourceSql = async (text: string) => {
      const c = new pg.Client({ connectionString: source.url })
      await c.connect()
      try {
        await c.query(text)
      } finally {
        await c.end()
      }
    }
    await sourceSql(SCHEMA)
    const state = await suite.freshDb('cf_recipes_state')
    const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
    // The sample as it is, but for where it points: this sandbox app, this ledger, this source database.
    const sample = parse(readFileSync(join(SAMPLES, 'generic-sql.yaml'), 'utf8')) as Record<string, Record<string, unknown>>
    const cfg = join(mkdtempSync(join(tmpdir(), 'cf-recipes-')), 'chatferry.yaml')
    writeFileSync(
      cfg,
      stringify({
        ...sample,
        target: { ...sample.target, appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl },
        state: { url: state.url },
        source: { ...sample.source, url: source.url },
        load: { quotaWindowMs: 10_000 },
      }),
    )

    const run = await runCli(['run', '--config', cfg]).done
    expect(run.code, run.stderr).toBe(3)
    const rejects = JSON.parse((await runCli(['rejects', '--config', cfg, '--json']).done).stdout) as {
      entity: string
      legacyId: string
      message: string
    }[]
    expect(rejects.map((r) => `${r.entity} ${r.legacyId} ${r.message}`)).toEqual([expect.stringMatching(/^messages 106 receiver_id: is null$/)])

    const on = await sandboxContents(suite.tsb.sandbox, app.id)
    // Rooms of two are no groups; the deleted account is imported deactivated.
    expect(on.groups.map((g) => g.row.name)).toEqual(['General'])
    expect(on.members.map((m) => m.row.uid).sort()).toEqual(['1', '2', '3'])
    expect(on.users.find((u) => u.key === '3')?.row.deactivated_at).not.toBeNull()
    expect(on.users.find((u) => u.key === '1')?.row.deactivated_at).toBeNull()
    const msg = (id: string) =>
      on.messages.find((m) => m.key === id)?.row as { sender: string; receiver: string; receiver_type: string; data: Record<string, unknown> }
    // Direct messages: one-to-one, to the room's other member.
    expect(msg('102')).toMatchObject({ sender: '1', receiver_type: 'user', receiver: '2' })
    expect(msg('103')).toMatchObject({ sender: '2', receiver_type: 'user', receiver: '1' })
    expect(msg('100')).toMatchObject({ receiver_type: 'group' })
    // The reply names its parent; the soft-deleted post is a tombstone; the newest revision is the text.
    expect(JSON.stringify(msg('101').data.metadata)).toMatch(/"parent":\{"id":"100"/)
    expect(msg('104').data.text).toBe('This message was deleted.')
    expect(msg('105').data.text).toBe('final')
    expect(JSON.stringify(msg('105').data.metadata)).toMatch(/"editedAt":\d+/)
    expect(on.messages.find((m) => m.key === '106')).toBeUndefined()

    // An edit after the load, in the history table: updated_at sees it, and the delta applies it.
    await sourceSql(`INSERT INTO post_revisions VALUES (100, 'Hello everyone', now())`)
    const delta = await runCli(['run', '--delta', '--config', cfg]).done
    expect(delta.code, delta.stderr).toBe(3)
    const after = await sandboxContents(suite.tsb.sandbox, app.id)
    expect((after.messages.find((m) => m.key === '100')?.row.data as { text: string }).text).toBe('Hello everyone')
  }, 180_000)
})
