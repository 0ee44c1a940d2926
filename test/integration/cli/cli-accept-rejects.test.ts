/**
 * Issue 28, item 1: an operator can finish a migration with known-bad rows. Through the CLI as a
 * process (a SQLite in-house source with bad rows, a Postgres ledger, the sandbox): rejects
 * without a payload are not silently "0 planned again" by retry-rejected; the operator accepts the
 * judged ones (one code's, then the rest from the rejects listing kept in a file) with a reason
 * kept with who and when;
 * the next delta exits 0 while one is open only if it is fixed and loaded (then it is no reject
 * at all); a new bad row makes the delta exit 3 again, listed alone.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { describe, expect, it } from 'vitest'

import { openGenericWriter, sqlTime } from '../../fixtures/generic-sql/fixture.ts'
import { oneJsonObject, useCliSuite } from '../../helpers/cli-suite.ts'
import { fixtureSource, genericJob } from '../../helpers/generic-job.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { sandboxContents } from '../../helpers/run-e2e.ts'

const suite = useCliSuite()

describe('accepted rejects', () => {
  it('known-bad rows accepted → the next delta exits 0; a fixed row is no reject; a new bad row exits 3 again', async () => {
    const { dir, url: sourceUrl } = await fixtureSource('cf-accept')
    const { app, cfg } = await genericJob(suite, 'cf_accept', { dir, url: sourceUrl })
    const cli = (...args: string[]) => runCli([...args, '--config', cfg]).done

    const first = await cli('run')
    expect(first.code, first.stderr).toBe(3)
    const listed = JSON.parse((await cli('rejects', '--json')).stdout) as { entity: string; legacyId: string; code: string; resendable: boolean }[]
    expect(listed.length).toBeGreaterThan(3)
    expect(listed.every((r) => !r.resendable)).toBe(true)

    // retry-rejected cannot send rows that were never mapped, and says so (it used to print "0 planned again", exit 0).
    const retry = await cli('retry-rejected', '--code', listed[0]!.code)
    expect(retry.code, retry.stdout).toBe(2)
    expect(retry.stderr).toMatch(
      /have no payload to send again: their source rows could not be mapped .*fix those rows in the source, then `.* run --delta .*accept-rejects --code/,
    )

    // Refusals: no reason, an unknown id, a code nothing has.
    expect((await cli('accept-rejects', '--all')).stderr).toMatch(/--reason is required/)
    const unknown = await cli('accept-rejects', '--ids', '5,no-such-row', '--reason', 'x')
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/1 id\(s\) name no rejected item of job \S+: no-such-row; nothing was accepted/)
    const typo = await cli('accept-rejects', '--code', listed[0]!.code.slice(0, -1) + 'X', '--reason', 'x')
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain(`(did you mean --code ${listed[0]!.code}?)`)
    expect((await cli('status', '--json')).stdout).not.toMatch(/"accepted": [1-9]/)

    // By code: exactly that code's rejects are accepted (not user 5's), the rest stay open.
    const user5 = listed.find((r) => r.entity === 'users' && r.legacyId === '5')!
    const code = listed.find((r) => r.code !== user5.code)!.code
    const ofCode = listed.filter((r) => r.code === code).length
    const byCode = await cli('accept-rejects', '--code', code, '--reason', 'judged by code', '--json')
    expect(byCode.code, byCode.stderr).toBe(0)
    expect(oneJsonObject(byCode.stdout)).toMatchObject({ accepted: ofCode, open: listed.length - ofCode })

    // The operator keeps the listing, leaves out user 5 (to be fixed in the source), and accepts the rest.
    const table = (await cli('rejects')).stdout
    expect(table).toContain(`\n${listed.length - ofCode} rejected: `)
    expect(table).not.toMatch(new RegExp(`\t${code}\t`))
    const file = join(dir, 'judged.tsv')
    writeFileSync(
      file,
      table
        .split('\n')
        .filter((l) => !l.startsWith('users\t5\t'))
        .join('\n'),
    )
    const accepted = await runCli(['accept-rejects', '--ids-file', file, '--reason', 'known bad rows of the old system', '--config', cfg, '--json'], {
      CHATFERRY_OPERATOR: 'ops-on-call',
    }).done
    expect(accepted.code, accepted.stderr).toBe(0)
    expect(oneJsonObject(accepted.stdout)).toMatchObject({ accepted: listed.length - ofCode - 1, open: 1, by: 'ops-on-call' })
    const acceptedList = (await cli('rejects', '--accepted')).stdout
    expect(acceptedList).toMatch(/^entity\tlegacy id\ttarget key\tcode\treject reason\taccepted by\taccepted at\twhy\n/)
    expect(acceptedList).toMatch(new RegExp(`\t${code}\t.*\tjudged by code\n`))
    expect(acceptedList).toMatch(/\tops-on-call\t\d{4}-\d\d-\d\dT[^\t]+\tknown bad rows of the old system\n/)
    expect((await cli('rejects')).stdout).toMatch(
      /^entity or update\t.*\nusers\t5\t.*\n1 rejected: .*\n\d+ accepted reject\(s\) not listed: rejects --accepted\n$/,
    )

    // User 5 is still open: the delta exits 3.
    const stillOpen = await cli('run', '--delta')
    expect(stillOpen.code, stillOpen.stderr).toBe(3)

    // Fixed in the source: the delta loads user 5 under its uid, and its old reject is no reject any more.
    const w = await openGenericWriter('sqlite', sourceUrl)
    await w.exec(`UPDATE people SET full_name = 'Ghost Writer', modified_s = ${Math.floor(Date.now() / 1000)} WHERE pid = 5`)
    await w.close()
    const fixed = await runCli(['run', '--delta', '--config', cfg, '--json']).done
    expect(fixed.code, fixed.stderr).toBe(0)
    const summary = oneJsonObject(fixed.stdout) as { entities: Record<string, { rejected: number; accepted: number }> }
    expect(Object.values(summary.entities).reduce((a, e) => a + e.rejected, 0)).toBe(0)
    expect(Object.values(summary.entities).reduce((a, e) => a + e.accepted, 0)).toBe(listed.length - 1)
    expect((await cli('rejects')).stdout).toMatch(/^no rejected items\n\d+ accepted reject\(s\) not listed/)
    const onPlatform = await sandboxContents(suite.tsb.sandbox, app.id)
    expect(onPlatform.users.map((u) => u.row.name)).toContain('Ghost Writer')

    // Nothing new: still 0. A new bad line: 3 again, and only it is listed.
    expect((await cli('run', '--delta')).code).toBe(0)
    const w2 = await openGenericWriter('sqlite', sourceUrl)
    const now = sqlTime(Date.now())
    await w2.insert('chat_lines', [{ lid: 500, author: 1, room: null, to_pid: null, body: 'to nobody', kind: 'text', posted: now, modified: now }])
    await w2.close()
    const again = await cli('run', '--delta')
    expect(again.code, again.stderr).toBe(3)
    const open = JSON.parse((await cli('rejects', '--json')).stdout) as { entity: string; legacyId: string }[]
    expect(open.map((r) => `${r.entity} ${r.legacyId}`)).toEqual(['messages 500'])
    expect(readFileSync(file, 'utf8')).not.toContain('users\t5\t')
  }, 180_000)
})
