/**
 * The `changes:` section of a job's configuration (composed into `src/job/config.ts`): what a
 * delta run does with a change to something already on the platform. Each kind of change is a
 * policy — `apply` (sent through the chat interface by the update lane), `report` (counted in the
 * ledger and the reports, never sent) or `ignore` (counted as ignored) — and rows hard-deleted from
 * the source (`vanished`) are removed on the platform or reported. See mappings/README.md
 * "Changes after the bulk load".
 */
import { z } from 'zod'

import { CONFLICT_POLICIES } from '../state/index.ts'

const Policy = z.enum(['apply', 'report', 'ignore'])
export type ChangePolicy = z.infer<typeof Policy>

const Vanished = z
  .object({
    /** A user row gone from the source: `delete` (= deactivate the user) or `report`. @default 'delete' */
    users: z.enum(['delete', 'report']).default('delete'),
    /** A group row gone: `delete` (`DELETE /groups/{guid}`, which removes its history) or `report`. @default 'report' */
    groups: z.enum(['delete', 'report']).default('report'),
    /** A membership row gone: `delete` (= kick) or `report`. @default 'delete' */
    members: z.enum(['delete', 'report']).default('delete'),
    /** A message row gone (only looked for with `run --delta --detect-deletes`): `delete` or `report`. @default 'report' */
    messages: z.enum(['delete', 'report']).default('report'),
    /**
     * The largest share (0–1) of an entity's loaded items one comparison may find gone. Beyond it
     * (and beyond 10 items), nothing is recorded and the run warns with the counts: a source
     * pointed at the wrong database, or a query that lost its rows, must not deactivate every user.
     * Raise it (up to 1) for a deletion that large on purpose. @default 0.5
     */
    maxShare: z.number().min(0).max(1).default(0.5),
  })
  .strict()
export type VanishedPolicy = 'delete' | 'report'

/** Up to this many vanished items of an entity are always taken, whatever `maxShare` says. */
export const VANISHED_ALWAYS = 10

/** The guard of `changes.vanished.maxShare`: may a comparison that finds `gone` of `loaded` items gone go on? */
export function vanishedAllowed(maxShare: number, gone: number, loaded: number): boolean {
  return gone <= VANISHED_ALWAYS || gone <= maxShare * loaded
}

export const ChangesSchema = z
  .object({
    /** Renames, profile fields, deactivation and reactivation of loaded users. @default 'apply' */
    users: Policy.default('apply'),
    /** Name, type (made private), icon, metadata, tags, owner of loaded groups. @default 'apply' */
    groups: Policy.default('apply'),
    /** Scope changes, bans and unbans, re-adds of loaded memberships. @default 'apply' */
    members: Policy.default('apply'),
    /** A loaded message's text or data changed in the source (the import always sends the latest text). @default 'apply' */
    edits: Policy.default('apply'),
    /** A loaded message soft-deleted in the source (`policies.deletes.mode`: skip → delete, tombstone → edit to the tombstone). @default 'apply' */
    deletions: Policy.default('apply'),
    /** Rows hard-deleted from the source, found by comparing the source's keys with the ledger. */
    vanished: Vanished.prefault({}),
    /**
     * A change to an item changed on the platform after chatferry last wrote it (a message edited
     * or deleted there, a group updated, a member changed; seen by `chatferry webhooks receive`):
     * `report` (not applied, listed as `conflict`), `source-wins` (applied) or `platform-wins`
     * (dropped, counted as `dropped`). @default 'report'
     */
    conflicts: z.enum(CONFLICT_POLICIES).default('report'),
  })
  .strict()

export type ChangesConfig = z.output<typeof ChangesSchema>

/** The defaults (`changes:` absent). */
export const DEFAULT_CHANGES: ChangesConfig = ChangesSchema.parse({})
