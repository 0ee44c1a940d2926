/**
 * A job with files for the files lane's CLI tests: a generic-sql legacy SQLite file (the
 * generic-sql fixture's schema: three people, one room, messages whose `files` column names
 * attachments on a local file host), a sandbox app, a fresh ledger database, and a
 * `chatferry.yaml` with a `files:` section re-hosting into an s3rver bucket. The store's secret
 * reaches the CLI only through the environment (`filesEnv`).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'

import { parse, stringify } from 'yaml'

import type { AppSettingsPatch } from '../../src/sandbox/index.ts'
import { G0, genericSchemaSql, genericSourceConfig, sqlTime } from '../fixtures/generic-sql/fixture.ts'
import type { CliSuite } from './cli-suite.ts'
import type { FileServer } from './file-server.ts'
import { writeRunConfig } from './run-e2e.ts'
import type { S3TestServer } from './s3-server.ts'
import type { TestApp } from './sandbox.ts'

/** One message of the job: its legacy id, the names of its files on the file host, and its text (default `line <lid>`). */
export interface FilesMessage {
  readonly lid: number
  readonly files: readonly string[]
  readonly body?: string
}

export interface FilesJob {
  readonly app: TestApp
  readonly cfg: string
  readonly stateUrl: string
  /** The environment the CLI needs (the store's secret). */
  readonly env: Record<string, string>
  /** The job's directory (the legacy file, the configuration; `plan --out` reports). */
  readonly dir: string
}

export interface FilesJobOptions {
  readonly messages: readonly FilesMessage[]
  readonly bucket: string
  readonly files?: Record<string, unknown>
  readonly load?: Record<string, unknown>
  /** Sandbox settings of the job's app (e.g. `checkAttachmentUrls`). */
  readonly appSettings?: AppSettingsPatch
}

function writeLegacy(dir: string, host: FileServer, messages: readonly FilesMessage[]): string {
  const file = join(dir, 'legacy.db')
  const db = new DatabaseSync(file)
  for (const s of genericSchemaSql('sqlite')) {
    db.exec(s)
  }
  writePeople(db)
  insertMessages(db, host, messages)
  db.close()
  return `sqlite:${file}`
}

/** The job's three people in one room. */
function writePeople(db: DatabaseSync): void {
  const t = G0 / 1000 - 86_400
  for (const pid of [1, 2, 3]) {
    db.prepare('insert into people (pid, full_name, handle, robot, joined_s, modified_s) values (?, ?, ?, 0, ?, ?)').run(
      pid,
      `Person ${pid}`,
      `p${pid}`,
      t,
      t,
    )
  }
  db.prepare(`insert into rooms (rid, title, visibility, owner, created_iso) values ('r1', 'Room', 'public', 1, '2024-02-01T08:00:00Z')`).run()
  for (const pid of [1, 2, 3]) {
    db.prepare(`insert into room_people (rid, pid, role, blocked, since) values ('r1', ?, 'participant', 0, ?)`).run(pid, sqlTime(G0 - 3_600_000))
  }
}

function insertMessages(db: DatabaseSync, host: FileServer, messages: readonly FilesMessage[]): void {
  for (const m of messages) {
    const files =
      m.files.length === 0
        ? null
        : JSON.stringify(
            m.files.map((name) => ({
              url: host.urlOf(name),
              mimeType: host.files.get(name)?.type,
              size: host.files.get(name)?.bytes.length || undefined,
            })),
          )
    db.prepare(`insert into chat_lines (lid, author, room, body, kind, files, posted, modified) values (?, ?, 'r1', ?, 'text', ?, ?, ?)`).run(
      m.lid,
      (m.lid % 3) + 1,
      m.body ?? `line ${m.lid}`,
      files,
      sqlTime(G0 + m.lid * 60_000),
      sqlTime(G0 + m.lid * 60_000),
    )
  }
}

/** Adds messages to the job's legacy file (a later run plans them). */
export function addFilesMessages(job: FilesJob, host: FileServer, messages: readonly FilesMessage[]): void {
  const db = new DatabaseSync(join(job.dir, 'legacy.db'))
  insertMessages(db, host, messages)
  db.close()
}

export async function filesJob(suite: CliSuite, host: FileServer, s3: S3TestServer, o: FilesJobOptions): Promise<FilesJob> {
  const dir = mkdtempSync(join(tmpdir(), 'cf-files-job-'))
  const url = writeLegacy(dir, host, o.messages)
  const state = await suite.freshDb('cf_files')
  const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000, ...o.appSettings })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: genericSourceConfig(url) as unknown as Record<string, unknown>,
    policies: { retention: { oldMessages: 'send' } },
    load: { quotaWindowMs: 10_000, ...o.load },
    dir,
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
      multipartThresholdBytes: 5 * 1024 * 1024,
    },
    ...o.files,
  }
  writeFileSync(cfg, stringify(yaml))
  return { app, cfg, stateUrl: state.url, env: { CHATFERRY_TEST_S3_SECRET: s3.secretAccessKey }, dir }
}

/** Rewrites the job's `files:` section (a later run under another policy). */
export function setFilesConfig(cfg: string, patch: Record<string, unknown>): void {
  const yaml = parse(readFileSync(cfg, 'utf8')) as { files: Record<string, unknown> }
  yaml.files = { ...yaml.files, ...patch }
  writeFileSync(cfg, stringify(yaml))
}
