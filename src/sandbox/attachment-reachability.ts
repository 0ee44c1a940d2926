/**
 * The sandbox's strict attachment check (`checkAttachmentUrls`, issue 27): each distinct
 * attachment URL of a request's messages is asked once (HEAD, or a one-byte GET where HEAD is
 * refused; 5 s each, a few at a time); a message with a URL that does not answer 2xx is refused
 * with `ERR_ATTACHMENT_UNREACHABLE` naming the URL and what it answered.
 */
import type { MessageImport } from '../target/schemas.ts'

const TIMEOUT_MS = 5000
const CONCURRENCY = 8

async function ask(url: string): Promise<string | undefined> {
  const signal = AbortSignal.timeout(TIMEOUT_MS)
  try {
    let res = await fetch(url, { method: 'HEAD', signal })
    if (res.status === 405 || res.status === 501) {
      res = await fetch(url, { headers: { range: 'bytes=0-0' }, signal })
      await res.body?.cancel()
    }
    return res.ok ? undefined : `HTTP ${res.status}`
  } catch (err) {
    return signal.aborted ? `no answer within ${TIMEOUT_MS / 1000} s` : (err as Error).message
  }
}

function urlsOf(item: MessageImport): string[] {
  const attachments = (item as { data?: { attachments?: { url?: unknown }[] } }).data?.attachments ?? []
  return attachments.flatMap((a) => (typeof a.url === 'string' ? [a.url] : []))
}

/** The problem of each message whose attachments do not all answer, by key. */
export async function unreachableAttachments(items: readonly { key: string; item: MessageImport }[]): Promise<Map<string, string>> {
  const answers = new Map<string, string | undefined>()
  const queue = [...new Set(items.flatMap((g) => urlsOf(g.item)))]
  const worker = async () => {
    for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
      answers.set(url, /^https?:\/\//i.test(url) ? await ask(url) : 'not an http(s) URL')
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const problems = new Map<string, string>()
  for (const g of items) {
    const bad = urlsOf(g.item).find((u) => answers.get(u) !== undefined)
    if (bad !== undefined) {
      problems.set(g.key, `The attachment ${bad} is not reachable (${answers.get(bad)}).`)
    }
  }
  return problems
}
