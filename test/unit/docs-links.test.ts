/**
 * The README and the chapters in docs/ stay true to the tree: every relative link points at a file
 * or folder that exists, and every test or source file docs/reliability.md names as the proof of a
 * guarantee exists (a guarantee whose test was renamed or removed would otherwise read as proven).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '../..')
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md'))

/** `[text](target)` links that are neither absolute URLs nor in-page anchors, without their `#anchor`. */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] as string)
    .filter((t) => !/^[a-z]+:/i.test(t) && !t.startsWith('#'))
    .map((t) => t.replace(/#.*$/, ''))
}

describe('documentation links', () => {
  it.each(DOCS)('%s: every relative link resolves', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8')
    const broken = relativeLinks(text).filter((t) => !existsSync(join(ROOT, dirname(file), t)))
    expect(broken).toEqual([])
  })

  it('docs/reliability.md: every file named as a proof exists', () => {
    const text = readFileSync(join(ROOT, 'docs/reliability.md'), 'utf8')
    const named = [...text.matchAll(/`((?:test|src|connectors)\/[^`\s]+\.ts)`/g)].map((m) => m[1] as string)
    expect(named.length).toBeGreaterThan(20)
    expect(named.filter((f) => !existsSync(join(ROOT, f))).map((f) => relative(ROOT, join(ROOT, f)))).toEqual([])
  })
})
