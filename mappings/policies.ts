/**
 * Every decision about legacy data the platform cannot take as is, as one zod schema. The config
 * file mounts it as `policies:`; every key has a default, so `policies: {}` (or no key at all) is a
 * complete, conservative configuration. `mappings/README.md` explains each policy and outcome for
 * operators.
 */
import { z } from 'zod'

import { GROUP_TYPES, ID_PATTERN, LIMITS, MEMBER_SCOPES } from '../src/target/schemas.ts'

/** Days of history the platform keeps by default ("about 6 months"). */
export const DEFAULT_RETENTION_DAYS = 183
/** Words quoted from a thread parent when `threads.quoteParent` is `true`. */
export const DEFAULT_QUOTE_WORDS = 12

const platformId = z.string().min(1).max(LIMITS.ID_MAX).regex(ID_PATTERN, 'must be lowercase alpha-dash (a-z, 0-9, -, _)')
const tag = z.string().max(LIMITS.TAG_MAX)

const Threads = z
  .object({
    /**
     * Replies: `flatten` imports them as ordinary messages with the parent in
     * `data.metadata.<key>.parent` (the platform's import has no thread field); `skip` drops them.
     * @default 'flatten'
     */
    replies: z.enum(['flatten', 'skip']).default('flatten'),
    /**
     * Prefix a reply's text with a quote of its parent's first words: `false`, `true` (12 words)
     * or a number of words.
     * @default false
     */
    quoteParent: z.union([z.boolean(), z.number().int().min(1).max(200)]).default(false),
  })
  .strict()

const Edits = z
  .object({
    /**
     * The latest text is always imported (the platform keeps no edit history). `metadata` also
     * records the edit time as `data.metadata.<key>.editedAt` (UNIX seconds); `drop` does not.
     * @default 'metadata'
     */
    editedAt: z.enum(['metadata', 'drop']).default('metadata'),
  })
  .strict()

const Deletes = z
  .object({
    /** Soft-deleted messages: `skip`, or `tombstone` (a text message saying it was deleted). @default 'skip' */
    mode: z.enum(['skip', 'tombstone']).default('skip'),
    /** The tombstone's text. @default 'This message was deleted.' */
    tombstoneText: z.string().trim().min(1).max(1000).default('This message was deleted.'),
  })
  .strict()

const SystemUser = z
  .object({
    /** @default 'system' */
    uid: platformId.default('system'),
    /** @default 'System' */
    name: z.string().trim().min(1).max(LIMITS.NAME_MAX).default('System'),
  })
  .strict()

const SystemMessages = z
  .object({
    /** Joins, leaves, header changes…: `skip`, or `as-user` (a text message from `systemUser`). @default 'skip' */
    mode: z.enum(['skip', 'as-user']).default('skip'),
    /** The user system messages are sent as; created once by the run. @default {uid:'system', name:'System'} */
    systemUser: SystemUser.prefault({}),
  })
  .strict()

const Retention = z
  .object({
    /** Days of history the app keeps; messages older than `now − retentionDays` are "old". @default 183 */
    retentionDays: z.number().int().min(1).max(100_000).default(DEFAULT_RETENTION_DAYS),
    /** Old messages: `skip`, or `send` when the app has extended retention. @default 'skip' */
    oldMessages: z.enum(['skip', 'send']).default('skip'),
  })
  .strict()

const LongText = z
  .object({
    /**
     * Text that makes a message's `data` exceed 10 KB (or its payload 65,536 characters): `split`
     * into several messages (`<muid>`, `<muid>-p2`, …) or `truncate`.
     * @default 'split'
     */
    mode: z.enum(['split', 'truncate']).default('split'),
    /** A text needing more parts than this is rejected. @default 20 */
    maxParts: z.number().int().min(2).max(1000).default(20),
    /** Appended to a truncated text. @default ' […]' */
    truncationMarker: z.string().max(50).default(' […]'),
  })
  .strict()

const MissingUsers = z
  .object({
    /**
     * A message whose sender or (one-to-one) receiver is not a known user: `placeholder` creates a
     * placeholder user (reported) and keeps the message; `reject` rejects the message.
     * @default 'placeholder'
     */
    mode: z.enum(['placeholder', 'reject']).default('placeholder'),
    /** Placeholder display name; `{id}` is the legacy user id. @default 'Unknown user {id}' */
    name: z.string().trim().min(1).max(LIMITS.NAME_MAX).default('Unknown user {id}'),
    /** Placeholder uid prefix; the rest is a hash of the legacy id. @default 'placeholder-' */
    uidPrefix: z
      .string()
      .max(60)
      .regex(/^[a-z0-9_-]*$/, 'must be lowercase alpha-dash')
      .default('placeholder-'),
    /** Tag on every placeholder user (empty: none). @default 'placeholder' */
    tag: tag.default('placeholder'),
  })
  .strict()

const Scopes = z
  .object({
    /** @default 'admin' */
    admin: z.enum(MEMBER_SCOPES).default('admin'),
    /** @default 'moderator' */
    moderator: z.enum(MEMBER_SCOPES).default('moderator'),
    /** @default 'participant' */
    participant: z.enum(MEMBER_SCOPES).default('participant'),
    /** Scope of the group's owner, whatever the legacy scope. @default 'admin' */
    owner: z.enum(MEMBER_SCOPES).default('admin'),
  })
  .strict()

const GroupTypes = z
  .object({
    /** @default 'public' */
    public: z.enum(GROUP_TYPES).default('public'),
    /** @default 'private' */
    private: z.enum(GROUP_TYPES).default('private'),
    /** @default 'password' */
    password: z.enum(GROUP_TYPES).default('password'),
    /** A password group without a password: make it `private`, or `reject` it. @default 'private' */
    withoutPassword: z.enum(['private', 'reject']).default('private'),
  })
  .strict()

const Bots = z
  .object({
    /** Bot users: `keep` (tagged), or `skip` (their messages are then skipped too). @default 'keep' */
    mode: z.enum(['keep', 'skip']).default('keep'),
    /** Tag added to kept bots (empty: none). @default 'bot' */
    tag: tag.default('bot'),
  })
  .strict()

const ArchivedGroups = z
  .object({
    /** Archived groups: `keep` (tagged, `archivedAt` in metadata), or `skip` (members and messages too). @default 'keep' */
    mode: z.enum(['keep', 'skip']).default('keep'),
    /** Tag added to kept archived groups (empty: none). @default 'archived' */
    tag: tag.default('archived'),
  })
  .strict()

const Roles = z
  .object({
    /** Legacy role → platform role id (the role must exist on the platform). @default {} */
    map: z.record(z.string(), platformId).default({}),
    /** A role not in `map`: `drop` it (default role), or `keep` it if it is a valid id. @default 'drop' */
    unmapped: z.enum(['drop', 'keep']).default('drop'),
  })
  .strict()

const Text = z
  .object({
    /**
     * Characters neither the platform nor Postgres can store (U+0000, unpaired UTF-16 surrogates)
     * in any text of a record (names, URLs, message text, metadata and custom data keys and
     * values): `strip` removes them (counted per field as `text: stripped:<field>`), `quarantine`
     * rejects the record naming the field and the position. Legacy ids are never changed: an id
     * holding one is always rejected.
     * @default 'strip'
     */
    invalidCharacters: z.enum(['strip', 'quarantine']).default('strip'),
  })
  .strict()

const LegacyMetadata = z
  .object({
    /** Key under `metadata` (users, groups) or `data.metadata` (messages) where chatferry writes what it keeps. @default 'legacy' */
    key: z.string().min(1).max(64).default('legacy'),
    /** Also record each record's legacy id there (for reconciliation). @default true */
    ids: z.boolean().default(true),
  })
  .strict()

export const PoliciesSchema = z
  .object({
    /** Thread replies. @default {replies:'flatten', quoteParent:false} */
    threads: Threads.prefault({}),
    /** Edited messages. @default {editedAt:'metadata'} */
    edits: Edits.prefault({}),
    /** Soft-deleted messages. @default {mode:'skip'} */
    deletes: Deletes.prefault({}),
    /** Reactions: into `data.metadata.<key>.reactions` (`{emoji: [uid…]}`), or `drop`. @default 'metadata' */
    reactions: z.enum(['metadata', 'drop']).default('metadata'),
    /** System messages. @default {mode:'skip'} */
    systemMessages: SystemMessages.prefault({}),
    /** The platform's retention window. @default {retentionDays:183, oldMessages:'skip'} */
    retention: Retention.prefault({}),
    /** A text message with empty text and no attachments: `skip`, or `reject` (reported as bad input). @default 'skip' */
    emptyMessages: z.enum(['skip', 'reject']).default('skip'),
    /** Text over the platform's limits. @default {mode:'split', maxParts:20} */
    longText: LongText.prefault({}),
    /** An attachment without a URL: `drop` it (the message keeps its other content), or `reject` the message. @default 'drop' */
    brokenAttachments: z.enum(['drop', 'reject']).default('drop'),
    /** Unknown sender or receiver. @default {mode:'placeholder'} */
    missingUsers: MissingUsers.prefault({}),
    /** `rewrite` mentions to the platform's `<@uid:…>` with `mentionedUserDetails`, or `keep` the text as is. @default 'rewrite' */
    mentions: z.enum(['rewrite', 'keep']).default('rewrite'),
    /**
     * A member's joinedAt outside (group createdAt, now), which the platform refuses: `clamp` it
     * into the window, `omit` it, or `reject` the member.
     * @default 'clamp'
     */
    joinedAt: z.enum(['clamp', 'omit', 'reject']).default('clamp'),
    /** Legacy member scope → platform scope. @default identity, owner → admin */
    scopes: Scopes.prefault({}),
    /** Banned members: `keep` (imported with isBanned), or `skip`. @default 'keep' */
    bans: z.enum(['keep', 'skip']).default('keep'),
    /** Legacy group type → platform group type. @default identity, passwordless password groups → private */
    groupTypes: GroupTypes.prefault({}),
    /** Bot users. @default {mode:'keep', tag:'bot'} */
    bots: Bots.prefault({}),
    /** Deactivated users: `keep` (with deactivatedAt), `activate` (without), or `skip`. @default 'keep' */
    deactivatedUsers: z.enum(['keep', 'activate', 'skip']).default('keep'),
    /** Archived groups. @default {mode:'keep', tag:'archived'} */
    archivedGroups: ArchivedGroups.prefault({}),
    /** User roles. @default {map:{}, unmapped:'drop'} */
    roles: Roles.prefault({}),
    /** The import has no group description: keep it in `metadata.description`, or `drop` it. @default 'metadata' */
    groupDescription: z.enum(['metadata', 'drop']).default('metadata'),
    /**
     * The user import has no e-mail field: keep a legacy user's e-mail in `metadata.email`, or `drop`
     * it (counted either way). User metadata can be read by the app's users through the chat API.
     * @default 'metadata'
     */
    userEmails: z.enum(['metadata', 'drop']).default('metadata'),
    /**
     * An optional field the platform would refuse (URL over 3,000 characters, more than 25 tags or a
     * tag over 100, metadata over 5 KB, an invalid optional timestamp): `fix` (drop or trim it,
     * counted), or `reject` the record.
     * @default 'fix'
     */
    fieldLimits: z.enum(['fix', 'reject']).default('fix'),
    /** Characters the platform cannot store. @default {invalidCharacters:'strip'} */
    text: Text.prefault({}),
    /** Where chatferry records legacy facts in metadata. @default {key:'legacy', ids:true} */
    legacyMetadata: LegacyMetadata.prefault({}),
    /**
     * Path of a user module exporting `adjust(entity, item, record)`, applied to every mapped item
     * (relative to the config file). @default none
     */
    module: z.string().min(1).optional(),
  })
  .strict()

export type PoliciesInput = z.input<typeof PoliciesSchema>
export type Policies = z.output<typeof PoliciesSchema>

/** The policies with every default. */
export function defaultPolicies(): Policies {
  return PoliciesSchema.parse({})
}

/** Rule names that are not configurable but whose outcomes are counted too. */
export const FIXED_RULES = [
  /** A legacy id changed or re-keyed by the id policy. */
  'ids',
  /** Names cut to 100 characters. */
  'names',
  /** A group owner that is not a known user. */
  'groupOwner',
  /** A record skipped because what it depends on (sender, group…) was skipped by a policy. */
  'dependencies',
  /** The user module. */
  'userModule',
] as const

/** Names under which policy outcomes are counted: the policy keys, plus the fixed rules. */
export type PolicyName = Exclude<keyof Policies, 'module' | 'legacyMetadata'> | (typeof FIXED_RULES)[number]

export const POLICY_NAMES: readonly PolicyName[] = [
  ...(Object.keys(PoliciesSchema.shape).filter((k) => k !== 'module' && k !== 'legacyMetadata') as PolicyName[]),
  ...FIXED_RULES,
]
