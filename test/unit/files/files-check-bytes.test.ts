/**
 * The byte checks (src/files/copy/check-bytes.ts) as a table: each row is a file's facts and the
 * verdict — too large, truncated, sizes that differ, an HTML page or a login page where a file was
 * expected, magic bytes of another kind — and, as important, the files that must pass: text
 * formats without magic, a PNG named .jpg, an Office file sniffed as ZIP, an HTML attachment.
 */
import { describe, expect, it } from 'vitest'

import { type ByteFacts, checkBytes, extensionOf, kindOfType, mayStartWithTag } from '../../../src/files/copy/check-bytes.ts'

const head = (s: string) => new TextEncoder().encode(s)
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
const LOGIN = '<!DOCTYPE html><html><head><title>Sign in</title></head><body><form><input type="password" name="p"></form></body></html>'
const PAGE = '<!doctype html><html><body><h1>Our blog</h1></body></html>'

const base: ByteFacts = { name: 'photo.png', bytes: 100, maxBytes: 1000, head: PNG, sniffedType: 'image/png' }

const rows: [string, Partial<ByteFacts>, string | 'ok'][] = [
  ['a good PNG', {}, 'ok'],
  ['over maxBytes', { bytes: 1001 }, 'too-large'],
  ['exactly maxBytes', { bytes: 1000 }, 'ok'],
  ['fewer bytes than announced', { announcedSize: 120 }, 'truncated'],
  ['more bytes than announced', { announcedSize: 80 }, 'size-mismatch'],
  ["not the record's size", { expectedSize: 99 }, 'size-mismatch'],
  ["the record's size", { expectedSize: 100, announcedSize: 100 }, 'ok'],
  [
    'a login page where a PNG was expected',
    { head: head(LOGIN), sniffedType: undefined, declaredType: 'text/html; charset=utf-8' },
    'expired-credentials',
  ],
  [
    'a login page (words only) where a PDF was expected',
    { name: 'c.pdf', head: head('<html><body>Please log in to continue</body></html>'), sniffedType: undefined },
    'expired-credentials',
  ],
  [
    "a login page where a PNG of the record's size was expected (the page is not that size)",
    { expectedSize: 48_213, head: head(LOGIN), sniffedType: undefined, declaredType: 'text/html' },
    'expired-credentials',
  ],
  [
    "an HTML page where a PDF of the record's size was expected",
    { name: 'c.pdf', expectedSize: 48_213, head: head(PAGE), sniffedType: undefined },
    'html-instead-of-file',
  ],
  ["an HTML attachment not the record's size", { name: 'page.html', expectedSize: 99, head: head(PAGE), sniffedType: undefined }, 'size-mismatch'],
  ['an HTML page where a PNG was expected', { head: head(PAGE), sniffedType: undefined }, 'html-instead-of-file'],
  [
    'an HTML page after a BOM, a no-break space and new lines where a PNG was expected',
    { head: head(`\uFEFF\u00A0\r\n\u3000 ${PAGE}`), sniffedType: undefined },
    'html-instead-of-file',
  ],
  [
    'an HTML page declared text/html where application/pdf was stated',
    { name: 'x', expectedType: 'application/pdf', head: head('  <div>gone</div>'), declaredType: 'text/html', sniffedType: undefined },
    'html-instead-of-file',
  ],
  ['an HTML attachment named .html', { name: 'page.html', head: head(LOGIN), sniffedType: undefined, declaredType: 'text/html' }, 'ok'],
  ['an HTML attachment stated text/html', { name: 'page', expectedType: 'text/html', head: head(PAGE), sniffedType: undefined }, 'ok'],
  ['an HTML page with nothing expected', { name: 'download', head: head(PAGE), sniffedType: undefined }, 'ok'],
  ['a password form with nothing expected', { name: 'download', head: head(LOGIN), sniffedType: undefined }, 'expired-credentials'],
  [
    'a text file mentioning <html> not at its start',
    { name: 'notes.txt', head: head('how to write <html> tags'), sniffedType: undefined, declaredType: 'text/plain' },
    'ok',
  ],
  ['a PDF where a PNG was expected', { sniffedType: 'application/pdf' }, 'wrong-type'],
  ['a PNG where image/jpeg was stated (one kind)', { name: 'photo.jpg', expectedType: 'image/jpeg' }, 'ok'],
  [
    'a ZIP where a DOCX was stated',
    { name: 'a.docx', sniffedType: 'application/zip', expectedType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' },
    'ok',
  ],
  ['an MP4 where audio/mp4 was stated', { name: 'voice.m4a', sniffedType: 'video/mp4', expectedType: 'audio/mp4' }, 'ok'],
  ['a PNG where a CSV was expected (text: no magic to contradict)', { name: 'data.csv' }, 'ok'],
  ['nothing sniffed where a PNG was expected (no clear contradiction)', { sniffedType: undefined, head: head('plain bytes') }, 'ok'],
  ['a PNG with no type and no extension stated', { name: 'blob' }, 'ok'],
  ['an unknown sniffed kind (a font) where a PNG was expected', { sniffedType: 'font/woff2' }, 'ok'],
  ['a ZIP where a PDF was stated', { name: 'r.pdf', sniffedType: 'application/zip', expectedType: 'application/pdf' }, 'wrong-type'],
  ['a PNG where video was stated', { name: 'clip', sniffedType: 'image/png', expectedType: 'video/mp4' }, 'wrong-type'],
]

describe('checkBytes', () => {
  it.each(rows)('%s', (_what, over, expected) => {
    const verdict = checkBytes({ ...base, ...over })
    expect(verdict.ok ? 'ok' : verdict.cause).toBe(expected)
    if (!verdict.ok) {
      expect(verdict.reason.length).toBeGreaterThan(10)
    }
  })
})

describe('mayStartWithTag (the bytes looked at before any decoding)', () => {
  it.each([
    ['<html>', true],
    [' \t\r\n<!doctype html>', true],
    ['\uFEFF<html>', true],
    ['\u00A0<body>', true],
    ['\u2028\u3000<head>', true],
    ['%PDF-1.7', false],
    ['plain text', false],
    ['   ', false],
    ['', false],
  ])('%j → %s', (text, expected) => {
    expect(mayStartWithTag(head(text))).toBe(expected)
  })

  it('is false for binary magic (PNG, JPEG) without decoding', () => {
    expect(mayStartWithTag(PNG)).toBe(false)
    expect(mayStartWithTag(Uint8Array.from([0xff, 0xd8, 0xff, 0xe0]))).toBe(false)
  })
})

describe('kinds and extensions', () => {
  it.each([
    ['image/jpeg', 'image'],
    ['IMAGE/PNG; foo=bar', 'image'],
    ['image/svg+xml', 'text'],
    ['application/vnd.oasis.opendocument.text', 'archive'],
    ['application/octet-stream', undefined],
    ['', undefined],
  ])('%s is of kind %s', (type, kind) => {
    expect(kindOfType(type)).toBe(kind)
  })
  it.each([
    ['Photo.JPG', 'jpg'],
    ['archive.tar.gz', 'gz'],
    ['.bashrc', ''],
    ['dir.d/noext', ''],
    ['a/b\\c.pdf', 'pdf'],
  ])('%s has the extension %j', (name, ext) => {
    expect(extensionOf(name)).toBe(ext)
  })
})
