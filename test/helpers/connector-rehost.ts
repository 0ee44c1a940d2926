/**
 * What the connectors' re-hosting tests share (issue 27: "for every connector's fixture with
 * files, every attachment on the sandbox points into the store and its bytes hash to the
 * source's"): a `chatferry.yaml` for `run` with the test's source and a `files:` section
 * re-hosting into a bucket of the in-process S3 server (the store's secret reaches the CLI only
 * through the environment), the attachments the sandbox holds checked against the source's
 * files by SHA-256 read back through their public URLs, and a scan of the ledger's files and
 * reports for secrets.
 */
import { readFileSync, writeFileSync } from 'node:fs'

import pg from 'pg'
import { expect } from 'vitest'
import { parse, stringify } from 'yaml'

import type { PoliciesInput } from '../../mappings/index.ts'
import type { CliSuite } from './cli-suite.ts'
import { sha256 } from './file-server.ts'
import { sandboxContents, writeRunConfig } from './run-e2e.ts'
import type { S3TestServer } from './s3-server.ts'
import type { TestApp } from './sandbox.ts'

export interface RehostJob {
  readonly app: TestApp
  readonly cfg: string
  readonly stateUrl: string
  /** The environment the CLI needs (the store's secret, and whatever the test adds). */
  readonly env: Record<string, string>
}

export interface RehostJobOptions {
  readonly source: Record<string, unknown>
  readonly bucket: string
  readonly policies?: PoliciesInput
  readonly files?: Record<string, unknown>
  /** More environment for the CLI (a source token written as `${VAR}`). */
  readonly env?: Record<string, string>
}

/** A fresh ledger, an app keeping old history, and a config re-hosting into `bucket`. */
export async function rehostJob(suite: CliSuite, s3: S3TestServer, o: RehostJobOptions): Promise<RehostJob> {
  const state = await suite.freshDb('cf_rehost')
  const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: o.source,
    policies: o.policies ?? { retention: { oldMessages: 'send' } },
    load: { quotaWindowMs: 10_000 },
  })
  const yaml = parse(readFileSync(cfg, 'utf8')) as Record<string, unknown>
  yaml.files = {
    mode: 'rehost',
    store: {
      kind: 's3',
      bucket: o.bucket,
      endpoint: s3.endpoint,
      forcePathStyle: true,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: '${CHATFERRY_TEST_S3_SECRET}',
      publicBaseUrl: s3.publicBase(o.bucket),
    },
    attempts: 1,
    ...o.files,
  }
  writeFileSync(cfg, stringify(yaml))
  return { app, cfg, stateUrl: state.url, env: { CHATFERRY_TEST_S3_SECRET: s3.secretAccessKey, ...o.env } }
}

/** One attachment as the sandbox stored it. */
export interface StoredAttachment {
  readonly muid: string
  readonly url: string
  readonly name: string
  readonly size?: string | number
}

/** Every attachment of every message the sandbox holds for the app. */
export async function sandboxAttachments(suite: CliSuite, app: TestApp): Promise<StoredAttachment[]> {
  await suite.tsb.sandbox.whenIdle()
  const out: StoredAttachment[] = []
  for (const m of (await sandboxContents(suite.tsb.sandbox, app.id)).messages) {
    const data = m.row.data as { attachments?: Omit<StoredAttachment, 'muid'>[] }
    for (const a of data.attachments ?? []) {
      out.push({ muid: m.key, ...a })
    }
  }
  return out
}

/**
 * Every attachment on the sandbox points into the bucket, and the bytes its URL serves hash to the
 * source file of its name (`sources`: name → bytes); every source file is among them. Returns the
 * attachments.
 */
export async function expectEveryAttachmentRehosted(
  suite: CliSuite,
  app: TestApp,
  s3: S3TestServer,
  bucket: string,
  sources: ReadonlyMap<string, Uint8Array>,
): Promise<StoredAttachment[]> {
  const attachments = await sandboxAttachments(suite, app)
  expect(attachments.length, 'attachments on the sandbox').toBeGreaterThan(0)
  for (const a of attachments) {
    expect(a.url.startsWith(`${s3.publicBase(bucket)}/`), `${a.name} of ${a.muid}: ${a.url}`).toBe(true)
    const source = sources.get(a.name)
    expect(source, `the source file of ${a.name}`).toBeDefined()
    const res = await fetch(a.url)
    expect(res.status, a.url).toBe(200)
    const body = Buffer.from(await res.arrayBuffer())
    expect(sha256(body), `${a.name} through ${a.url}`).toBe(sha256(source!))
    expect(Number(a.size)).toBe(source!.length)
  }
  expect(new Set(attachments.map((a) => a.name))).toEqual(new Set(sources.keys()))
  return attachments
}

/** The ledger's files rows and reports as text (what a secret must never be in), and the files' states. */
export async function ledgerFilesAndReports(stateUrl: string): Promise<{ text: string; states: Record<string, number> }> {
  const c = new pg.Client({ connectionString: stateUrl })
  await c.connect()
  try {
    const files = await c.query<{ t: string; state: string }>(`select row_to_json(f)::text as t, state from chatferry.files f`)
    const reports = await c.query<{ t: string }>(`select row_to_json(r)::text as t from chatferry.reports r`)
    const runs = await c.query<{ t: string }>(`select row_to_json(r)::text as t from chatferry.runs r`)
    const states: Record<string, number> = {}
    for (const r of files.rows) {
      states[r.state] = (states[r.state] ?? 0) + 1
    }
    return { text: [...files.rows, ...reports.rows, ...runs.rows].map((r) => r.t).join('\n'), states }
  } finally {
    await c.end()
  }
}

/** None of `secrets` is in the ledger's files, reports and runs, nor in `outputs` (what the CLI printed). */
export async function expectNoSecrets(stateUrl: string, secrets: readonly string[], outputs: readonly string[]): Promise<void> {
  const ledger = (await ledgerFilesAndReports(stateUrl)).text
  expect(ledger.length).toBeGreaterThan(0)
  for (const secret of secrets) {
    expect(ledger.includes(secret), 'a secret in the ledger').toBe(false)
    for (const out of outputs) {
      expect(out.includes(secret), 'a secret in the CLI output').toBe(false)
    }
  }
}

/** Bytes of `size` that sniff as a JPEG. */
export function jpegBytes(size: number): Buffer {
  const head = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00])
  return Buffer.concat([head, Buffer.alloc(Math.max(0, size - head.length), 7)])
}
