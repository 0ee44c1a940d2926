/**
 * The text-link rewrite of `files.rewriteTextLinks` (src/state/text-links.ts) as table tests: which
 * URLs a text names, how each known legacy URL becomes its public URL with the punctuation after
 * it kept, and verify's match of a listed text (each link rewritten or still legacy).
 */
import { describe, expect, it } from 'vitest'

import { linkCandidates, matchesWithLinks, replaceTextLinks } from '../../../src/state/text-links.ts'

const links = new Map([
  ['http://old.test/a.png', 'https://cdn.test/1.png'],
  ['http://old.test/a.png?x=1', 'https://cdn.test/2.png'],
])

describe('linkCandidates', () => {
  it.each([
    ['no link here', []],
    ['see http://old.test/a.png', ['http://old.test/a.png']],
    ['(http://old.test/a.png).', ['http://old.test/a.png).', 'http://old.test/a.png)', 'http://old.test/a.png']],
    ['"https://x.test/b"', ['https://x.test/b']],
    ['HTTP://X.TEST/C and ftp://x.test/d', ['HTTP://X.TEST/C']],
  ])('%j names %j', (text, want) => {
    expect(linkCandidates(text)).toEqual(want)
  })
})

describe('replaceTextLinks', () => {
  it.each([
    ['see http://old.test/a.png', 'see https://cdn.test/1.png', 1],
    ['(http://old.test/a.png). and http://old.test/a.png!', '(https://cdn.test/1.png). and https://cdn.test/1.png!', 2],
    ['query http://old.test/a.png?x=1, done', 'query https://cdn.test/2.png, done', 1],
    // A longer URL that only starts with a known one is another file.
    ['http://old.test/a.png2 and http://old.test/a.pngx', 'http://old.test/a.png2 and http://old.test/a.pngx', 0],
    ['http://elsewhere.test/a.png', 'http://elsewhere.test/a.png', 0],
    ['', '', 0],
  ])('%j → %j', (text, want, n) => {
    expect(replaceTextLinks(text, links)).toEqual({ text: want, rewritten: n })
  })
})

describe('matchesWithLinks', () => {
  const planned = 'a http://old.test/a.png b http://old.test/a.png?x=1 (c)'
  it.each([
    ['a https://cdn.test/1.png b https://cdn.test/2.png (c)', true],
    ['a http://old.test/a.png b https://cdn.test/2.png (c)', true],
    [planned, true],
    ['a https://cdn.test/2.png b https://cdn.test/1.png (c)', false],
    ['a https://cdn.test/1.png b https://cdn.test/2.png (c) extra', false],
    ['a https://cdn.test/1.png b https://cdn.test/2.png [c]', false],
  ])('%j matches: %s', (actual, want) => {
    expect(matchesWithLinks(actual, planned, links)).toBe(want)
  })
})
