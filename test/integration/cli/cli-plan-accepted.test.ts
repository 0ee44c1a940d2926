/**
 * Issue 28, item 6: the plan report shows accepted rejects. Through the CLI as a process (a SQLite
 * in-house source, a Postgres ledger, the sandbox): after `accept-rejects`, `plan` names the
 * accepted rejects per entity and the command that says who accepted them, in its terminal text,
 * its JSON report and its HTML report; before any acceptance it says nothing of them.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { expect, it } from 'vitest'

import { useCliSuite } from '../../helpers/cli-suite.ts'
import { fixtureSource, genericJob } from '../../helpers/generic-job.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'

const suite = useCliSuite()

it('plan names the accepted rejects (terminal, JSON, HTML) once an operator accepted them', async () => {
  const { dir, url } = await fixtureSource('cf-plan-accepted')
  const { cfg } = await genericJob(suite, 'cf_plan_accepted', { dir, url })
  const cli = (...args: string[]) => runCli([...args, '--config', cfg]).done
  expect((await cli('run')).code).toBe(3)

  const before = mkdtempSync(join(tmpdir(), 'cf-plan-acc-before-'))
  const first = await cli('plan', '--out', before)
  expect(first.stdout).toMatch(/^rejected users: /m)
  expect(first.stdout).not.toMatch(/accepted rejects/)

  expect((await cli('accept-rejects', '--entity', 'users', '--reason', 'no name, no birth: known')).code).toBe(0)
  const out = mkdtempSync(join(tmpdir(), 'cf-plan-acc-'))
  const plan = await cli('plan', '--out', out)
  expect(plan.code, plan.stderr.slice(-2000)).not.toBe(1)
  expect(plan.stdout).toMatch(
    /^accepted rejects \(judged by an operator; they no longer make a run exit 3, new rejects do\): users 2 \(`chatferry rejects --accepted` says who, when and why\)$/m,
  )
  const files = readdirSync(out)
  const json = JSON.parse(readFileSync(join(out, files.find((f) => f.endsWith('.json')) as string), 'utf8')) as {
    acceptedRejects?: { entities: Record<string, number> }
  }
  expect(json.acceptedRejects?.entities).toEqual({ users: 2, groups: 0, members: 0, messages: 0 })
  expect(readFileSync(join(out, files.find((f) => f.endsWith('.html')) as string), 'utf8')).toMatch(/accepted rejects \(judged by an operator/)
}, 180_000)
