/**
 * `plan` under `files.mode: reference`: asks a sample of the legacy attachment URLs whether they
 * answer now (HEAD, or a one-byte GET where HEAD is refused), a few at a time, each within 5 s. The
 * URLs are shown without their query strings (a legacy URL can carry a token there).
 */
import { shownUrl } from '../files/read/shown-url.ts'
import type { FilesPlan } from '../report/files-plan.ts'

const TIMEOUT_MS = 5000

async function ask(url: string, signal?: AbortSignal): Promise<string | undefined> {
  const timeout = AbortSignal.timeout(TIMEOUT_MS)
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout
  try {
    let res = await fetch(url, { method: 'HEAD', signal: both, redirect: 'follow' })
    if (res.status === 405 || res.status === 501) {
      res = await fetch(url, { method: 'GET', headers: { range: 'bytes=0-0' }, signal: both, redirect: 'follow' })
      await res.body?.cancel()
    }
    return res.status < 400 ? undefined : `HTTP ${res.status}`
  } catch (err) {
    return timeout.aborted ? `no answer within ${TIMEOUT_MS / 1000} s` : (err as Error).message
  }
}

export async function checkAttachmentUrls(urls: readonly string[], signal?: AbortSignal): Promise<NonNullable<FilesPlan['reachability']>> {
  const failures: { url: string; problem: string }[] = []
  const queue = [...urls]
  const worker = async () => {
    for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
      const problem = /^https?:\/\//i.test(url) ? await ask(url, signal) : 'not an http(s) URL'
      if (problem !== undefined) {
        failures.push({ url: shownUrl(url), problem })
      }
    }
  }
  await Promise.all(Array.from({ length: 4 }, worker))
  return { checked: urls.length, reachable: urls.length - failures.length, failures }
}
