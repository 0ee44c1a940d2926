/**
 * The suite's secret scan (test/helpers/secrets.ts, run by the global teardown) must be able to
 * fail: it finds a planted secret in a recorded output and in a report file, and ignores the
 * configuration files that hold secrets on purpose and files older than the run.
 */
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { describe, expect, it } from 'vitest'

import { findSecrets, scanForLeaks, SECRET_MARKER, testSecret, withTestPassword } from '../../helpers/secrets.ts'

describe('findSecrets', () => {
  it.each([
    ['a planted API key', `apikey: ${testSecret('apikey')}`, 1],
    ['a password inside a URL', withTestPassword('postgres://u@127.0.0.1:5432/db'), 1],
    ['two of them', `${testSecret('a')} and ${testSecret('b')}`, 2],
    ['a redacted URL', 'postgres://u:***@127.0.0.1/db', 0],
    ['text that only resembles it', 'cf-test-secrets are marked with a prefix', 0],
  ])('%s → %d', (_what, text, n) => {
    const found = findSecrets(text)
    expect(found).toHaveLength(n)
    // The scan report names the label, never the whole secret.
    for (const f of found) {
      expect(f.length).toBeLessThanOrEqual(SECRET_MARKER.length + 9)
    }
  })

  it('keeps a URL that already has a password (a real server that asks for it)', () => {
    expect(withTestPassword('postgres://u:real@h/db')).toBe('postgres://u:real@h/db')
  })
})

describe('scanForLeaks', () => {
  it('finds a planted secret in a recorded output and a report, but not in a config file or an old file', () => {
    const root = mkdtempSync(join(tmpdir(), 'cf-scan-'))
    const since = Date.now() - 1000
    const secret = testSecret('planted')
    mkdirSync(join(root, 'outputs'))
    mkdirSync(join(root, 'reports'))
    writeFileSync(join(root, 'outputs', 'cli-run.txt'), `stderr: could not connect with ${secret}`)
    writeFileSync(join(root, 'reports', 'plan-report.json'), JSON.stringify({ apiKey: secret }))
    writeFileSync(join(root, 'chatferry.yaml'), `target:\n  apiKey: ${secret}\n`)
    writeFileSync(join(root, 'clean.txt'), 'nothing to see')
    const old = join(root, 'old.txt')
    writeFileSync(old, secret)
    utimesSync(old, new Date(since - 60_000), new Date(since - 60_000))

    const leaks = scanForLeaks(since, [root])
    expect(leaks.map((l) => l.file.slice(root.length + 1)).sort()).toEqual(['outputs/cli-run.txt', 'reports/plan-report.json'])
    expect(JSON.stringify(leaks)).not.toContain(secret)
  })
})
