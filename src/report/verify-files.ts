/**
 * `verify`'s files check (issue 27): every copied file's public URL answers (HEAD, a few at a
 * time) with the recorded size, and a deterministic sample of them is downloaded and hashed
 * against the recorded SHA-256 — the store is asked, not the platform, so the chat budget is not
 * spent. Files not copied (failed, skipped) are counted: their messages went with the legacy URL
 * or a note, or wait. Any problem fails the verify. URLs are the store's (no credentials).
 */
import { createHash } from 'node:crypto'

import { z } from 'zod'

import type { FileRow, LedgerStore } from '../state/index.ts'

const PAGE = 2000
const CONCURRENCY = 8
const TIMEOUT_MS = 30_000

export const FilesVerify = z.object({
  copied: z.number().int(),
  reachable: z.number().int(),
  sampleRequested: z.number().int(),
  sampleHashed: z.number().int(),
  notCopied: z.object({ failed: z.number().int(), skipped: z.number().int(), planned: z.number().int() }),
  problems: z.array(z.object({ name: z.string(), url: z.string(), problem: z.string() })),
})
export type FilesVerify = z.infer<typeof FilesVerify>

async function head(url: string, signal?: AbortSignal): Promise<{ status: number; size: number | undefined }> {
  const s = signal ? AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]) : AbortSignal.timeout(TIMEOUT_MS)
  const res = await fetch(url, { method: 'HEAD', signal: s })
  const length = res.headers.get('content-length')
  return { status: res.status, size: length === null ? undefined : Number(length) }
}

async function sha256Of(url: string, signal?: AbortSignal): Promise<string> {
  const res = await fetch(url, signal ? { signal } : {})
  if (!res.ok || res.body === null) {
    throw new Error(`HTTP ${res.status}`)
  }
  const h = createHash('sha256')
  for await (const chunk of res.body) {
    h.update(chunk)
  }
  return h.digest('hex')
}

/** Checks one copied file; returns its problem, if any. */
async function checkFile(f: FileRow, hashIt: boolean, signal?: AbortSignal): Promise<string | undefined> {
  const url = f.publicUrl ?? ''
  try {
    const answer = await head(url, signal)
    if (answer.status >= 400) {
      return `HTTP ${answer.status}`
    }
    if (answer.size !== undefined && f.bytes !== null && answer.size !== f.bytes) {
      return `${answer.size} bytes, ${f.bytes} recorded`
    }
    if (hashIt) {
      const got = await sha256Of(url, signal)
      if (got !== f.sha256) {
        return `SHA-256 ${got}, ${f.sha256} recorded`
      }
    }
    return undefined
  } catch (err) {
    return (err as Error).message
  }
}

/** Runs the check over every copied file of the job; `sample` of them (spread evenly) are hashed. */
export async function verifyFiles(
  store: Pick<LedgerStore, 'files'>,
  jobId: string,
  sample: number,
  signal?: AbortSignal,
): Promise<FilesVerify | undefined> {
  const counts = await store.files.counts(jobId)
  if (counts.copied + counts.failed + counts.skipped + counts.planned === 0) {
    return undefined
  }
  const every = Math.max(1, Math.floor(counts.copied / Math.max(1, sample)))
  const problems: FilesVerify['problems'] = []
  let reachable = 0
  let hashed = 0
  let index = 0
  let afterId = 0
  for (;;) {
    const page = await store.files.list(jobId, { states: ['copied'], afterId, limit: PAGE })
    const queue = page.map((f) => ({ f, hashIt: index++ % every === 0 }))
    const worker = async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const hashIt = next.hashIt && hashed < sample
        if (hashIt) {
          hashed++
        }
        const problem = await checkFile(next.f, hashIt, signal)
        if (problem === undefined) {
          reachable++
        } else {
          problems.push({ name: next.f.name, url: next.f.publicUrl ?? '', problem })
        }
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    if (page.length < PAGE) {
      break
    }
    afterId = page[page.length - 1]?.id ?? afterId
  }
  return {
    copied: counts.copied,
    reachable,
    sampleRequested: sample,
    sampleHashed: hashed,
    notCopied: { failed: counts.failed, skipped: counts.skipped, planned: counts.planned },
    problems,
  }
}
