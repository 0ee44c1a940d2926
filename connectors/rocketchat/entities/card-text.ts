/**
 * The readable text of a Rocket.Chat message's cards and shared location. Integrations (incoming
 * webhooks, the GitHub, Jira and CI apps, Apps-Engine apps) and link quotes put their content in
 * `attachments[]` (core-typings `MessageAttachmentDefault`: `pretext`, `author_name`, `title`,
 * `title_link`, `text`, `fields[{title, value, short}]`, `image_url`; a quote's `message_link`;
 * Slack-format webhooks may add `fallback` and `footer`) and often leave `msg` empty. A shared
 * location is `location: {type: 'Point', coordinates: [lng, lat]}` with `msg` empty. Upload cards
 * (the upload's own card) are not cards here: the upload is the message's file.
 *
 * Each card becomes plain lines in the order Rocket.Chat shows them (connectors/cards/
 * attachment-lines.ts, shared with Mattermost); the keys not rendered
 * (colour, icons, buttons, nested quotes…) are returned so the caller keeps them in metadata.
 */
import type { JsonObject } from '../../../src/model/records.ts'
import { attachmentLines } from '../../cards/attachment-lines.ts'
import { type Doc, FieldProblem, jsonSafe } from './values.ts'

/** The media URL keys a Rocket.Chat card renders as lines of their own. */
const MEDIA = ['image_url', 'audio_url', 'video_url'] as const

export interface CardText {
  /** The rendered text: cards separated by a blank line; '' when none has readable content. */
  readonly text: string
  /** How many cards gave text. */
  readonly rendered: number
  /** Each card's keys that were not rendered (cards with none left out), or undefined if none. */
  readonly leftover: JsonObject[] | undefined
}

/** Renders the cards (already without upload cards); entries that are not documents are skipped. */
export function cardText(cards: readonly unknown[]): CardText {
  const blocks: string[] = []
  const leftover: JsonObject[] = []
  for (const c of cards) {
    if (c === null || typeof c !== 'object' || Array.isArray(c)) {
      continue
    }
    const { lines, rendered } = attachmentLines(c as Doc, MEDIA)
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
