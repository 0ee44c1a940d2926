/**
 * The suite's secrets and the scan that proves none of them leaks. Every API key, management
 * key/secret and database password the tests hand to chatferry carries {@link SECRET_MARKER}, so
 * any output that contains the marker is a leak. The helpers that spawn the CLI or drop a ledger
 * record what they saw under {@link OUTPUTS_DIR}; the global teardown scans it with the report
 * files the run wrote, and fails the run on any hit.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { extname, join, resolve } from 'node:path'

/** What every test secret starts with. */
export const SECRET_MARKER = 'cf-test-secret-'
const SECRET_PATTERN = /cf-test-secret-[A-Za-z0-9_]+/g

/** Where the helpers record the outputs of this test run (cleared by the global setup). */
export const OUTPUTS_DIR = resolve(import.meta.dirname, '../../test-artifacts/outputs')

/** A recognisable secret: the marker, a label saying what it is, and randomness. */
export function testSecret(label: string): string {
  return `${SECRET_MARKER}${label.replace(/[^A-Za-z0-9]/g, '')}_${randomBytes(6).toString('hex')}`
}

/** The management credentials of every test sandbox. */
export const MGMT = { key: `${SECRET_MARKER}mgmtkey`, secret: `${SECRET_MARKER}mgmtsecret` } as const

/**
 * A Postgres URL with a test password when it has none (the local and CI servers trust their
 * clients and never ask for it), so a leaked database password shows in the scan.
 */
export function withTestPassword(url: string): string {
  const u = new URL(url)
  if (u.password !== '' || (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')) {
    return url
  }
  u.password = `${SECRET_MARKER}dbpassword`
  return u.toString()
}

/** Records one output (a CLI process's stdout and stderr, a ledger dump) for the final scan. */
export function recordOutput(kind: string, text: string): void {
  mkdirSync(OUTPUTS_DIR, { recursive: true })
  const name = `${kind.replace(/[^A-Za-z0-9-]/g, '_')}-${process.pid}-${Date.now()}-${randomBytes(3).toString('hex')}.txt`
  writeFileSync(join(OUTPUTS_DIR, name), text)
}

/** The test secrets in `text`, each shortened to its label (the scan report must not repeat them whole). */
export function findSecrets(text: string): string[] {
  return [...text.matchAll(SECRET_PATTERN)].map((m) => `${m[0].slice(0, SECRET_MARKER.length + 8)}…`)
}

export interface Leak {
  readonly file: string
  readonly secrets: readonly string[]
}

const TEXT_FILES = new Set(['.txt', '.json', '.html', '.log', '.csv', ''])

/** Text files under `dir` (recursively) changed at or after `since`, minus configuration inputs. */
function filesUnder(dir: string, since: number): string[] {
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return []
  }
  const out: string[] = []
  for (const name of entries) {
    const path = join(dir, name)
    const st = statSync(path, { throwIfNoEntry: false })
    if (!st) {
      continue
    }
    // The embedded ledgers are binary database files; their rows are dumped by the helpers instead.
    if (st.isDirectory()) {
      if (name !== '.chatferry' && name !== 'node_modules') {
        out.push(...filesUnder(path, since))
      }
    } else if (st.mtimeMs >= since && TEXT_FILES.has(extname(name)) && st.size < 50_000_000) {
      out.push(path)
    }
  }
  return out
}

/**
 * Scans what a test run wrote since `since` (epoch ms): the recorded outputs, test-artifacts/, and
 * the report folders the CLI wrote into the tests' temporary directories (configuration files,
 * which hold secrets on purpose, are not outputs).
 */
export function scanForLeaks(since: number, roots: readonly string[] = defaultScanRoots()): Leak[] {
  const leaks: Leak[] = []
  for (const root of roots) {
    for (const file of filesUnder(root, since)) {
      const secrets = findSecrets(readFileSync(file, 'utf8'))
      if (secrets.length > 0) {
        leaks.push({ file, secrets: [...new Set(secrets)] })
      }
    }
  }
  return leaks
}

/** test-artifacts/ and the tests' `chatferry-*` temporary directories. */
export function defaultScanRoots(): string[] {
  const tmp = tmpdir()
  const temps = readdirSync(tmp)
    .filter((n) => n.startsWith('chatferry-'))
    .map((n) => join(tmp, n))
  return [resolve(OUTPUTS_DIR, '..'), ...temps]
}
