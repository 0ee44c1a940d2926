/**
 * The management interface's extension and team endpoints, and its app rules, as published
 * (cometchat/docs `management-apis.json`; `rest-api/extensions-overview.mdx`;
 * `rest-api/management-apis/properties-and-constraints`; `…/error-codes`):
 * - `GET /apps/{appId}/extensions` lists the extensions; `POST /apps/{appId}/extensions` with
 *   `{enabled: [ids], disabled: [ids]}` answers per id `{success, message}`.
 * - `GET /apps/{appId}/collaborators` lists `{id, name, email, role, createdAt}`; `POST
 *   /apps/{appId}/collaborators` with `{admins: [emails], moderators: [emails],
 *   collaboratorsToRemove: [emails]}` answers per role and email `{success}`.
 * - App name at most 100 characters (UTF8mb4); version `v3` only (sent as `"3"`); at most 25
 *   collaborators per app; regions us, eu, in.
 */
import { z } from 'zod'

/** Documented (properties and constraints): an app's name is at most 100 characters. */
export const APP_NAME_MAX = 100
/** Documented: v3 is the only app version; the create body's `version` is a string, default "3". */
export const APP_VERSIONS = ['3'] as const
/** Documented: at most 25 collaborators per app (team management). */
export const MAX_COLLABORATORS_PER_APP = 25

/** The extension ids the published extension list names (`rest-api/extensions-overview.mdx`). */
export const EXTENSION_IDS = [
  'live-migration-applozic',
  'avatar',
  'url-shortener-bitly',
  'widget',
  'chatwoot',
  'document',
  'whiteboard',
  'data-masking',
  'disappearing-messages',
  'email-notification',
  'email-replies',
  'emojis',
  'e2ee',
  'gifs-gfycat',
  'gifs-giphy',
  'image-moderation',
  'human-moderation',
  'intercom',
  'link-preview',
  'mentions',
  'message-shortcuts',
  'message-translation',
  'pin-message',
  'polls',
  'profanity-filter',
  'push-notification',
  'reactions',
  'reminders',
  'report-message',
  'report-user',
  'rich-media',
  'save-message',
  'sentiment-analysis',
  'slow-mode',
  'smart-reply',
  'sms-notification',
  'stickers',
  'stickers-stipop',
  'gifs-tenor',
  'thumbnail-generation',
  'url-shortener-tinyurl',
  'broadcast',
  'virus-malware-scanner',
  'voice-transcription',
  'xss-filter',
] as const
export type ExtensionId = (typeof EXTENSION_IDS)[number]

export function isExtensionId(value: string): value is ExtensionId {
  return (EXTENSION_IDS as readonly string[]).includes(value)
}

/** The team roles the add call takes (documented body: `admins`, `moderators`). */
export const TEAM_ROLES = ['admins', 'moderators'] as const
export type TeamRole = (typeof TEAM_ROLES)[number]

export const Email = z.email('must be an email address').max(254)

/** The body of "enable/disable extensions". */
export const SetExtensionsRequest = z
  .object({
    enabled: z.array(z.string().min(1)).optional(),
    disabled: z.array(z.string().min(1)).optional(),
  })
  .strict()
export type SetExtensionsRequest = z.input<typeof SetExtensionsRequest>

/**
 * One id's (or email's) result in a multi-item answer: documented `success` and `message`; the
 * `error` of a refused one is assumed to be the platform's usual error object.
 */
const ItemResult = z
  .object({
    success: z.boolean(),
    message: z.string().optional(),
    error: z.object({ code: z.string(), message: z.string().optional() }).loose().optional(),
  })
  .loose()
export type ExtensionResult = z.output<typeof ItemResult>
export type CollaboratorResult = ExtensionResult

export const SetExtensionsResponse = z
  .object({
    data: z
      .object({
        enabled: z.record(z.string(), ItemResult).optional(),
        disabled: z.record(z.string(), ItemResult).optional(),
      })
      .loose(),
  })
  .loose()

/**
 * An extension as listed (documented example: id, name, tagLine, description, isActive, hooks, …).
 * `enabled` (whether it is on for this app) is not in the published example: assumed, and optional.
 */
export const ExtensionRecord = z
  .object({ id: z.string(), name: z.string().optional(), isActive: z.boolean().optional(), enabled: z.boolean().optional() })
  .loose()
export type ExtensionRecord = z.output<typeof ExtensionRecord>
export const ListExtensionsResponse = z.object({ data: z.array(ExtensionRecord) }).loose()

/** The body of "add/remove collaborators". */
export const SetCollaboratorsRequest = z
  .object({
    admins: z.array(Email).optional(),
    moderators: z.array(Email).optional(),
    collaboratorsToRemove: z.array(Email).optional(),
  })
  .strict()
export type SetCollaboratorsRequest = z.input<typeof SetCollaboratorsRequest>

/** Documented example: each role a map email → result, or `[]` when the body named none. */
const RoleResults = z.union([z.record(z.string(), ItemResult), z.array(z.unknown()).transform(() => ({}))])

export const SetCollaboratorsResponse = z
  .object({
    data: z
      .object({
        admins: RoleResults.optional(),
        moderators: RoleResults.optional(),
        developers: RoleResults.optional(),
        collaboratorsToRemove: RoleResults.optional(),
      })
      .loose(),
  })
  .loose()

/** A collaborator as listed (documented example: id, name, email, role, createdAt). */
export const CollaboratorRecord = z
  .object({ id: z.string().optional(), name: z.string().optional(), email: z.string(), role: z.string(), createdAt: z.number().optional() })
  .loose()
export type CollaboratorRecord = z.output<typeof CollaboratorRecord>
export const ListCollaboratorsResponse = z.object({ data: z.array(CollaboratorRecord) }).loose()
