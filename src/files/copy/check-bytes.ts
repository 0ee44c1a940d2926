/**
 * Whether spooled bytes are the file the record describes, before anything is stored. Pure: the
 * facts (sizes, types, the first bytes, file-type's sniff) in, a verdict out. The order is the
 * order of certainty:
 *
 * 1. `too-large`: more than `maxBytes`;
 * 2. `truncated`: fewer bytes than the source announced (Content-Length, a stat);
 * 3. `size-mismatch`: not the size the source announced (more bytes);
 * 4. `expired-credentials` / `html-instead-of-file`: an HTML page (declared `text/html`, or a body
 *    that starts like one) where a file of another type was expected — the page a revoked token's
 *    login redirect serves. A login page (a password field, "sign in") is `expired-credentials`;
 *    with nothing expected, only a page with a password form fails (an HTML file may be the attachment).
 *    Before the record's size: a login page is never the record's size, and "renew the token" is
 *    the cause an operator can act on, where "size mismatch" would send them looking at the file;
 * 5. `size-mismatch`: not the size the legacy record states;
 * 6. `wrong-type`: the magic bytes say one kind of file (image, audio/video, PDF, archive) and the
 *    record another. Text formats (CSV, JSON, SVG, source code) have no magic bytes and never fail
 *    here; types of one kind never contradict each other (a PNG named `.jpg` is still an image,
 *    a DOCX sniffed as ZIP is still an archive). Only a clear contradiction fails.
 */
import type { FileFailureCause } from '../../model/files.ts'

export interface ByteFacts {
  /** The file's name as the record gives it (its extension is evidence of its type). */
  readonly name: string
  readonly bytes: number
  readonly maxBytes: number
  /** The size the source announced for these bytes. */
  readonly announcedSize?: number
  /** The size the legacy record states. */
  readonly expectedSize?: number
  /** The Content-Type the source declared. */
  readonly declaredType?: string
  /** The MIME type the legacy record states. */
  readonly expectedType?: string
  /** file-type's sniff of the bytes; undefined when it found no magic. */
  readonly sniffedType?: string
  /** The first bytes (a few KiB) of the file. */
  readonly head: Uint8Array
}

export type ByteVerdict = { readonly ok: true } | { readonly ok: false; readonly cause: FileFailureCause; readonly reason: string }

export function checkBytes(f: ByteFacts): ByteVerdict {
  if (f.bytes > f.maxBytes) {
    return fail('too-large', `${f.bytes} bytes, over the limit of ${f.maxBytes}`)
  }
  if (f.announcedSize !== undefined && f.bytes < f.announcedSize) {
    return fail('truncated', `${f.bytes} of the ${f.announcedSize} bytes the source announced arrived`)
  }
  if (f.announcedSize !== undefined && f.bytes !== f.announcedSize) {
    return fail('size-mismatch', `${f.bytes} bytes where the source announced ${f.announcedSize}`)
  }
  const html = htmlVerdict(f)
  if (html) {
    return html
  }
  if (f.expectedSize !== undefined && f.bytes !== f.expectedSize) {
    return fail('size-mismatch', `${f.bytes} bytes where the record states ${f.expectedSize}`)
  }
  return typeVerdict(f)
}

function fail(cause: FileFailureCause, reason: string): ByteVerdict {
  return { ok: false, cause, reason }
}

const decoder = new TextDecoder('utf-8', { fatal: false })
const PASSWORD_FIELD = /<input[^>]+type\s*=\s*["']?password/i
const LOGIN_WORDS = /\b(sign[\s-]?in|log[\s-]?in|login|session (has )?expired)\b/i

function htmlVerdict(f: ByteFacts): ByteVerdict | undefined {
  const declaredHtml = baseType(f.declaredType) === 'text/html' || baseType(f.declaredType) === 'application/xhtml+xml'
  if (!declaredHtml && !mayStartWithTag(f.head)) {
    return undefined
  }
  const text = decoder.decode(f.head.subarray(0, 4096)).replace(/^\uFEFF/, '')
  const bodyIsHtml = /^\s*(<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])/i.test(text)
  if (!bodyIsHtml && !(declaredHtml && /<[a-z!]/i.test(text))) {
    return undefined
  }
  const expected = expectedKind(f)
  if (expected === 'html') {
    return undefined
  }
  // With nothing expected, an HTML page may be the attachment: only a password form fails then.
  const login = expected === undefined ? PASSWORD_FIELD.test(text) : PASSWORD_FIELD.test(text) || LOGIN_WORDS.test(text)
  if (login) {
    return fail('expired-credentials', 'the source served a login page instead of the file: its credentials are no longer accepted')
  }
  if (expected === undefined) {
    return undefined
  }
  return fail('html-instead-of-file', `the source served an HTML page where ${describeExpected(f)} was expected`)
}

/**
 * False when the bytes cannot start (after white space) with `<` — most files, decided from a
 * byte or two instead of decoding 4 KiB: the first byte that is not ASCII white space is another
 * ASCII character, or a byte that starts no UTF-8 white space nor the BOM (U+00A0 starts with
 * C2; U+1680, U+2000–U+205F, U+3000 with E1, E2, E3; U+FEFF with EF). True leaves it to the
 * regular expressions on the decoded text.
 */
export function mayStartWithTag(head: Uint8Array): boolean {
  for (let i = 0; i < head.length; i++) {
    const byte = head[i]!
    if (byte === 0x20 || (byte >= 0x09 && byte <= 0x0d)) {
      continue
    }
    return byte === 0x3c || byte === 0xc2 || byte === 0xe1 || byte === 0xe2 || byte === 0xe3 || byte === 0xef
  }
  return false
}

function typeVerdict(f: ByteFacts): ByteVerdict {
  if (f.sniffedType === undefined) {
    return { ok: true }
  }
  const sniffed = kindOfType(f.sniffedType)
  const expected = expectedKind(f)
  if (sniffed === undefined || expected === undefined || expected === 'html' || expected === 'text' || sniffed === expected) {
    return { ok: true }
  }
  return fail('wrong-type', `the bytes are ${f.sniffedType} where ${describeExpected(f)} was expected`)
}

function describeExpected(f: ByteFacts): string {
  return f.expectedType !== undefined && f.expectedType !== '' ? f.expectedType : `a .${extensionOf(f.name)} file`
}

/** What kind of file the record says: by its MIME type, else by its name's extension; undefined when it says nothing usable. */
function expectedKind(f: ByteFacts): Kind | undefined {
  return kindOfType(f.expectedType) ?? kindOfExtension(extensionOf(f.name))
}

type Kind = 'image' | 'av' | 'pdf' | 'archive' | 'html' | 'text'

function baseType(type: string | undefined): string | undefined {
  return type?.split(';')[0]?.trim().toLowerCase()
}

const ARCHIVE_TYPES = new Set([
  'application/zip',
  'application/x-zip-compressed',
  'application/gzip',
  'application/x-gzip',
  'application/x-tar',
  'application/x-bzip2',
  'application/x-7z-compressed',
  'application/x-rar-compressed',
  'application/vnd.rar',
  'application/x-xz',
  'application/zstd',
  'application/epub+zip',
  'application/java-archive',
  'application/vnd.android.package-archive',
])

export function kindOfType(type: string | undefined): Kind | undefined {
  const t = baseType(type)
  if (t === undefined || t === '') {
    return undefined
  }
  if (t === 'text/html' || t === 'application/xhtml+xml') {
    return 'html'
  }
  if (t === 'image/svg+xml') {
    return 'text'
  }
  if (t.startsWith('image/')) {
    return 'image'
  }
  if (t.startsWith('audio/') || t.startsWith('video/')) {
    return 'av'
  }
  if (t === 'application/pdf') {
    return 'pdf'
  }
  // Office Open XML and OpenDocument files are ZIP archives.
  if (ARCHIVE_TYPES.has(t) || t.startsWith('application/vnd.openxmlformats-officedocument.') || t.startsWith('application/vnd.oasis.opendocument.')) {
    return 'archive'
  }
  if (t.startsWith('text/') || t === 'application/json' || t === 'application/xml' || t === 'application/javascript') {
    return 'text'
  }
  return undefined
}

const EXTENSION_KINDS: Readonly<Record<string, Kind>> = {
  png: 'image',
  jpg: 'image',
  jpeg: 'image',
  gif: 'image',
  webp: 'image',
  bmp: 'image',
  tif: 'image',
  tiff: 'image',
  heic: 'image',
  heif: 'image',
  avif: 'image',
  ico: 'image',
  mp3: 'av',
  m4a: 'av',
  wav: 'av',
  ogg: 'av',
  oga: 'av',
  opus: 'av',
  flac: 'av',
  aac: 'av',
  mp4: 'av',
  m4v: 'av',
  mov: 'av',
  webm: 'av',
  mkv: 'av',
  avi: 'av',
  pdf: 'pdf',
  zip: 'archive',
  gz: 'archive',
  tgz: 'archive',
  tar: 'archive',
  bz2: 'archive',
  '7z': 'archive',
  rar: 'archive',
  xz: 'archive',
  docx: 'archive',
  xlsx: 'archive',
  pptx: 'archive',
  odt: 'archive',
  ods: 'archive',
  odp: 'archive',
  epub: 'archive',
  jar: 'archive',
  apk: 'archive',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  txt: 'text',
  csv: 'text',
  tsv: 'text',
  json: 'text',
  xml: 'text',
  svg: 'text',
  md: 'text',
  log: 'text',
  yaml: 'text',
  yml: 'text',
  js: 'text',
  ts: 'text',
  py: 'text',
  sql: 'text',
}

function kindOfExtension(ext: string): Kind | undefined {
  return EXTENSION_KINDS[ext]
}

/** The lower-case extension of a file name, '' when it has none. */
export function extensionOf(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? ''
  const dot = base.lastIndexOf('.')
  return dot <= 0 ? '' : base.slice(dot + 1).toLowerCase()
}
