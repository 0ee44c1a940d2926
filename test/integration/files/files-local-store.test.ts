/**
 * The local directory store: writes land atomically under their key (no temporary file left),
 * `stat` sees them, the public URL is the served base + key, keys cannot leave the directory,
 * `check()` on a directory it cannot write is a configuration error, and a write it cannot make
 * while copying is StoreUnavailableError.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { describe, expect, it } from 'vitest'

import { ChatferryError } from '../../../src/errors.ts'
import { openFileStore } from '../../../src/files/store/open-store.ts'
import { StoreUnavailableError } from '../../../src/files/store/store-errors.ts'

const meta = { size: 5, contentType: 'text/plain', sha256: '0'.repeat(64) }

describe('the local store', () => {
  it('writes by key atomically, stats, and links at the served base URL', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cf-local-store-'))
    const src = join(root, 'in.part')
    writeFileSync(src, 'hello')
    const store = openFileStore({ kind: 'local', directory: join(root, 'store') }, { localPublicBaseUrl: 'http://127.0.0.1:4000/files/' })
    await store.check()
    expect(await store.stat('sha256/ab/x.txt')).toBeUndefined()
    await store.put('sha256/ab/x.txt', src, meta)
    expect(await store.stat('sha256/ab/x.txt')).toEqual({ size: 5 })
    expect(readFileSync(join(root, 'store/sha256/ab/x.txt'), 'utf8')).toBe('hello')
    expect(readdirSync(join(root, 'store/sha256/ab'))).toEqual(['x.txt'])
    expect(readdirSync(join(root, 'store')).filter((f) => f.startsWith('.chatferry-check'))).toEqual([])
    expect(store.publicUrl('sha256/ab/x.txt')).toBe('http://127.0.0.1:4000/files/sha256/ab/x.txt')
  })

  it('prefers the configured public base URL and needs one', () => {
    const root = mkdtempSync(join(tmpdir(), 'cf-local-store-'))
    const store = openFileStore({ kind: 'local', directory: root, publicBaseUrl: 'https://files.example.com' }, { localPublicBaseUrl: 'http://x' })
    expect(store.publicUrl('a/b.png')).toBe('https://files.example.com/a/b.png')
    expect(() => openFileStore({ kind: 'local', directory: root })).toThrow(/files.store.publicBaseUrl/)
  })

  it('refuses keys that would leave the directory', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cf-local-store-'))
    const store = openFileStore({ kind: 'local', directory: root, publicBaseUrl: 'https://f.example.com' })
    await expect(store.stat('../outside')).rejects.toThrow(/not a key inside the store/)
    await expect(store.put('/etc/x', join(root, 'nothing'), meta)).rejects.toThrow()
  })

  it('a directory it cannot write: check() is a configuration error, put() is StoreUnavailableError', async () => {
    // A file where the directory should be: no user (root included) can write under it.
    const root = mkdtempSync(join(tmpdir(), 'cf-local-store-'))
    const blocked = join(root, 'blocked')
    writeFileSync(blocked, 'a file, not a directory')
    const src = join(root, 'in.part')
    writeFileSync(src, 'hello')
    const store = openFileStore({ kind: 'local', directory: blocked, publicBaseUrl: 'https://f.example.com' })
    const err = await store.check().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ChatferryError)
    expect((err as ChatferryError).code).toBe('CONFIG_INVALID')
    expect((err as Error).message).toMatch(new RegExp(`files.store \\(the directory ${blocked}\\): cannot write and read there \\(EEXIST\\)`))
    await expect(store.put('sha256/ab/x.txt', src, meta)).rejects.toBeInstanceOf(StoreUnavailableError)
  })
})
