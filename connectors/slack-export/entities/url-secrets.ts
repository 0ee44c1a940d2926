/**
 * Credentials Slack puts in the URLs of an export, removed before a URL leaves the connector.
 * Official exports append the export's own access token to every file URL — spelled `?token=xoxe-…`
 * on `files-pri/` URLs of current exports, `?t=xoxe-…` on older exports and `files-tmb/` thumbnails
 * — and a public file link carries `pub_secret`. Anyone holding the token reads every file of the
 * workspace until it is revoked. Pure.
 */

/** Query parameters that carry a credential in Slack's file URLs. */
export const CREDENTIAL_PARAMS = ['token', 't', 'pub_secret'] as const

/** A Slack token as a value: `xoxe-`, `xoxp-`, `xoxb-`, `xoxc-`, `xoxa-2-`, `xoxe.xoxp-` … */
const TOKEN_VALUE = /^xox[a-z]{0,2}[-.]/i
/** Slack's own hosts, where `t` and `token` are always credentials. */
const SLACK_HOST = /(^|\.)(slack\.com|slack-edge\.com|slack-files\.com|slack-redir\.net|slack-imgs\.com)$/i

/**
 * Whether a query parameter is a credential: a Slack token value under any name; `token`, `t`,
 * `pub_secret` on a file URL or on any Slack host (elsewhere `t=42` is a video's start time).
 */
function isCredential(name: string, value: string, anyHost: boolean): boolean {
  return TOKEN_VALUE.test(value) || (anyHost && (CREDENTIAL_PARAMS as readonly string[]).includes(name.toLowerCase()))
}

function strip(url: string, fileUrl: boolean): string {
  if (!url.includes('?') && !url.includes('&')) {
    // No query, so no parameter to remove (most links): not parsed.
    return url
  }
  let u: URL
  try {
    u = new URL(url)
  } catch {
    // Not a parseable URL: remove anything shaped like a credential parameter all the same.
    return url
      .replace(/([?&])(?:token|t|pub_secret)=[^&#]*/gi, '$1')
      .replace(/([?&])[^=&#]*=xox[a-z]{0,2}[-.][^&#]*/gi, '$1')
      .replace(/([?&])&+/g, '$1')
      .replace(/[?&](?=#|$)/, '')
  }
  const anyHost = fileUrl || SLACK_HOST.test(u.hostname)
  const drop = [...u.searchParams].filter(([k, v]) => isCredential(k, v, anyHost)).map(([k]) => k)
  if (drop.length === 0) {
    return url
  }
  for (const k of drop) {
    u.searchParams.delete(k)
  }
  return u.toString()
}

/** A file's URL (`url_private`, thumbnails, …) without its credential parameters; other parameters stay. */
export const withoutToken = (url: string): string => strip(url, true)

/** Any other URL (a link in a message, an avatar, an attachment's link): Slack tokens and Slack hosts' credential parameters removed. */
export const withoutSecrets = (url: string): string => strip(url, false)
