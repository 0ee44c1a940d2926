/**
 * Where the files lane reads a Slack file's bytes (the locator an attachment carries):
 *
 * 1. inside the export, when the tool that made it put the files there — `__uploads/<id>/<name>`
 *    (slack-advanced-exporter's `fetch-attachments`, slackdump's default "Mattermost" layout), or
 *    `<conversation folder>/attachments/…` (slackdump's "standard" layout, which also rewrites
 *    `url_private` to that relative path; the `<id>-<name>` file name is tried too);
 * 2. else Slack's `url_private`, without the export's token, read with the operator's
 *    `source.fileToken` — only when one is set (without it the lane reads the attachment's URL as
 *    it is, and Slack's login page is caught by its checks).
 *
 * A ref inside the export is its path there; a URL ref is the URL. Neither holds a credential.
 */
import type { FileLocator } from '../../src/model/files.ts'
import type { ExportArchive } from '../archive/archive.ts'
import type { SlackFileRef } from './entities/message-files.ts'
import { withoutToken } from './entities/url-secrets.ts'

/** The reader id on every Slack locator. */
export const SLACK_READER = 'slack-export'

/** The paths inside the export a file may have been put at, in the order they are tried. */
export function exportCandidates(folder: string, file: SlackFileRef): string[] {
  const out: string[] = []
  if (file.id !== '?' && file.id !== '') {
    out.push(`__uploads/${file.id}/${file.name}`, `${folder}/attachments/${file.id}-${file.name}`)
  }
  const rel = file.urlPrivate
  if (rel !== undefined && rel !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(rel)) {
    out.push(`${folder}/${rel.replace(/^\.?\/+/, '')}`)
  }
  return out
}

/** The locator function of one conversation's messages. */
export function slackFileLocator(archive: ExportArchive, folder: string, hasToken: boolean): (file: SlackFileRef) => FileLocator | undefined {
  return (file) => {
    const inside = exportCandidates(folder, file).find((p) => archive.hasEntry(p))
    if (inside !== undefined) {
      return { reader: SLACK_READER, ref: inside, host: 'local' }
    }
    if (!hasToken || file.urlPrivate === undefined) {
      return undefined
    }
    let url: URL
    try {
      url = new URL(withoutToken(file.urlPrivate))
    } catch {
      return undefined
    }
    return url.protocol === 'https:' || url.protocol === 'http:' ? { reader: SLACK_READER, ref: url.toString(), host: url.host } : undefined
  }
}
