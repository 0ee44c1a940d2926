/**
 * The readable text of a Rocket.Chat message's cards and shared location. Integrations (incoming
 * webhooks, the GitHub, Jira and CI apps, Apps-Engine apps) and link quotes put their content in
 * `attachments[]` (core-typings `MessageAttachmentDefault`: `pretext`, `author_name`, `title`,
 * `title_link`, `text`, `fields[{title, value, short}]`, `image_url`; a quote's `message_link`;
 * Slack-format webhooks may add `fallback` and `footer`) and often leave `msg` empty. A shared
 * location is `location: {type: 'Point', coordinates: [lng, lat]}` with `msg` empty. Upload cards
 * (the upload's own card) are not cards here: the upload is the message's file.
 *
 * Each card becomes plain lines in the order Rocket.Chat shows them; the keys not rendered
 * (colour, icons, buttons, nested quotes…) are returned so the caller keeps them in metadata.
 */
import type { JsonObject } from '../../../src/model/records.ts'
import { type Doc, FieldProblem, jsonSafe } from './values.ts'

/** The card keys rendered into text (`fallback` only when nothing else is). */
const RENDERED = ['pretext', 'author_name', 'title', 'title_link', 'text', 'fields', 'image_url', 'audio_url', 'video_url', 'footer'] as const

export interface CardText {
  /** The rendered text: cards separated by a blank line; '' when none has readable content. */
  readonly text: string
  /** How many cards gave text. */
  readonly rendered: number
  /** Each card's keys that were not rendered (cards with none left out), or undefined if none. */
  readonly leftover: JsonObject[] | undefined
}

const str = (v: unknown): string | undefined => {
  if (typeof v === 'string') {
    return v.trim() === '' ? undefined : v.trim()
  }
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined
}

function fieldLines(fields: unknown): string[] {
  const lines: string[] = []
  for (const f of Array.isArray(fields) ? (fields as unknown[]) : []) {
    if (f === null || typeof f !== 'object' || Array.isArray(f)) {
      continue
    }
    const title = str((f as Doc).title)
    const value = str((f as Doc).value)
    if (title !== undefined || value !== undefined) {
      lines.push(title !== undefined && value !== undefined ? `${title}: ${value}` : (title ?? value ?? ''))
    }
  }
  return lines
}

function renderOne(card: Doc): { lines: string[]; rendered: Set<string> } {
  const lines: string[] = []
  const rendered = new Set<string>(RENDERED)
  const push = (v: string | undefined) => {
    if (v !== undefined) {
      lines.push(v)
    }
  }
  push(str(card.pretext))
  push(str(card.author_name))
  const title = str(card.title)
  const link = str(card.title_link)
  push(title !== undefined && link !== undefined ? `${title} (${link})` : (title ?? link))
  push(str(card.text))
  lines.push(...fieldLines(card.fields))
  push(str(card.image_url))
  push(str(card.audio_url))
  push(str(card.video_url))
  push(str(card.footer))
  const fallback = str(card.fallback)
  if (lines.length === 0 && fallback !== undefined) {
    lines.push(fallback)
    rendered.add('fallback')
  }
  return { lines, rendered }
}

/** Renders the cards (already without upload cards); entries that are not documents are skipped. */
export function cardText(cards: readonly unknown[]): CardText {
  const blocks: string[] = []
  const leftover: JsonObject[] = []
  for (const c of cards) {
    if (c === null || typeof c !== 'object' || Array.isArray(c)) {
      continue
    }
    const { lines, rendered } = renderOne(c as Doc)
    if (lines.length > 0) {
      blocks.push(lines.join('\n'))
    }
    const rest: JsonObject = {}
    for (const [k, v] of Object.entries(c as Doc)) {
      const safe = rendered.has(k) ? undefined : jsonSafe(v)
      if (safe !== undefined && safe !== null && safe !== '' && !(Array.isArray(safe) && safe.length === 0)) {
        rest[k] = safe as JsonObject[string]
      }
    }
    if (Object.keys(rest).length > 0) {
      leftover.push(rest)
    }
  }
  return { text: blocks.join('\n\n'), rendered: blocks.length, leftover: leftover.length > 0 ? leftover : undefined }
}

export interface SharedLocation {
  readonly latitude: number
  readonly longitude: number
  /** `Shared location: <map link>` — the link Rocket.Chat's own map view opens. */
  readonly text: string
}

/**
 * A shared location: GeoJSON `{type: 'Point', coordinates: [longitude, latitude]}`. Coordinates that
 * are no numbers in range are a problem on `location.coordinates` (the place cannot be told).
 */
export function sharedLocation(v: unknown): SharedLocation | undefined {
  if (v === undefined || v === null) {
    return undefined
  }
  const coords = typeof v === 'object' && !Array.isArray(v) ? (v as Doc).coordinates : undefined
  const [longitude, latitude] = Array.isArray(coords) ? (coords as unknown[]).map((x) => (typeof x === 'number' ? x : Number.NaN)) : []
  if (
    latitude === undefined ||
    longitude === undefined ||
    !Number.isFinite(latitude) ||
    !Number.isFinite(longitude) ||
    Math.abs(latitude) > 90 ||
    Math.abs(longitude) > 180
  ) {
    throw new FieldProblem('location.coordinates', `is ${JSON.stringify(jsonSafe(coords) ?? null)}, not [longitude, latitude] in range`)
  }
  return { latitude, longitude, text: `Shared location: https://maps.google.com/maps?daddr=${latitude},${longitude}` }
}
