/**
 * What a mapping takes (a {@link MappingContext}) and gives back (a {@link MapResult}).
 *
 * Terminology:
 * - **item**: one import item (user, group, member, message), valid against the zod schemas of
 *   `src/target/schemas.ts`, with its map key (`targetKey`: uid, guid, memberId, muid).
 * - **extra item**: an item a record needs that is not the record itself — a placeholder user for
 *   an unknown sender, the system user. The pipeline plans each distinct `targetKey` once.
 * - **outcome**: a policy's decision about a record (`{policy:'threads', outcome:'flattened'}`),
 *   counted per run and reported.
 * - **skipped**: a policy decided not to import the record. **rejected**: the record cannot be
 *   mapped (bad input); the run goes on and the report names the field.
 */
import type { LegacyEntity, LegacyGroupType, LegacyRecordOf } from '../src/model/index.ts'
import type { Entity, GroupType, ImportItemOf } from '../src/target/schemas.ts'
import type { IdRegistry } from './ids.ts'
import type { Policies, PolicyName } from './policies.ts'
import type { AdjustFn } from './user-module.ts'

/** A policy's decision about one record. Both strings are stable names for reports. */
export interface PolicyOutcome {
  readonly policy: PolicyName
  readonly outcome: string
}

export interface MappedItem<E extends Entity = Entity> {
  readonly entity: E
  /** The item's map key: uid, guid, memberId or muid. */
  readonly targetKey: string
  readonly payload: ImportItemOf[E]
  /**
   * Messages: a string that sorts items chronologically (sentAt, then muid, then part), so the
   * loader can send oldest first and keep the parts of a split message in order.
   */
  readonly sortKey?: string
  /** Extra items: why it exists (`placeholder`, `system-user`). */
  readonly reason?: string
}

export type MapResult<E extends Entity = Entity> =
  | {
      readonly kind: 'items'
      /** One item, or several for a split message (`<muid>`, `<muid>-p2`, …). */
      readonly items: readonly MappedItem<E>[]
      /** Items of other entities this record needs (placeholder users, the system user). */
      readonly extraItems: readonly MappedItem<'users'>[]
      readonly outcomes: readonly PolicyOutcome[]
    }
  | {
      readonly kind: 'skipped'
      /** The policy that decided it. */
      readonly policy: PolicyName
      readonly reason: string
      readonly outcomes: readonly PolicyOutcome[]
    }
  | {
      readonly kind: 'rejected'
      /** The legacy field (`name`, `sentAt`, `groupId`…) or, after validation, the item's field path (`data.text`). */
      readonly field: string
      readonly reason: string
      /** Set when a policy chose to reject (e.g. `missingUsers: reject`). */
      readonly policy?: PolicyName
    }

/** A user as already planned by the pipeline (a {@link import('../src/target/schemas.ts').UserImport} fits). */
export interface PlannedUser {
  readonly uid: string
  readonly name: string
  readonly avatar?: string
  /** The legacy username, to find `@username` mentions in text. */
  readonly username?: string
}

/** A group as already planned (a {@link import('../src/target/schemas.ts').GroupImport} fits). */
export interface PlannedGroup {
  readonly guid: string
  readonly name: string
  readonly type: GroupType | LegacyGroupType
  /** UNIX **seconds**, as in the import item. */
  readonly createdAt?: number
  /** The owner's uid. */
  readonly owner?: string
}

/** A message as already planned: what a reply needs of its thread parent. */
export interface PlannedMessage {
  readonly muid: string
  readonly text?: string
  readonly senderName?: string
}

/** A record that exists in the source but a policy skipped; records depending on it are skipped too. */
export interface SkippedRef {
  readonly skipped: true
  readonly policy: PolicyName
  /**
   * Set when the source row itself was rejected (`field: reason`): records that refer to it are
   * rejected naming that reason, never as referring to an unknown record.
   */
  readonly rejected?: string
}

export type Lookup<T> = (legacyId: string) => T | SkippedRef | undefined

/** Everything a mapping needs from outside. Mappings read nothing else: no clock, no I/O. */
export interface MappingContext {
  /** The run's clock, epoch milliseconds. */
  readonly now: number
  readonly policies: Policies
  readonly ids: IdRegistry
  /** Users mapped so far (by legacy id). */
  readonly user: Lookup<PlannedUser>
  /** Groups mapped so far (by legacy id). */
  readonly group: Lookup<PlannedGroup>
  /** Messages mapped so far (by legacy id), for thread parents. */
  readonly message: Lookup<PlannedMessage>
  /** The loaded user module's function, if `policies.module` is set. */
  readonly adjust?: AdjustFn
  /**
   * What is known about a group's times besides its record (by legacy id). When given, a group
   * without a valid `createdAt` gets one derived from it (`group-created-at.ts`); when absent
   * (tools, tests), such a group is imported without `createdAt`.
   */
  readonly groupCreation?: (legacyGroupId: string) => GroupCreationHints
}

/** A group's times from outside its record, to derive a missing `createdAt` (see `group-created-at.ts`). */
export interface GroupCreationHints {
  /** The `createdAt` (UNIX seconds) an earlier run already planned for the group. */
  readonly planned?: number
  /** The earliest `joinedAt` of the group's members in the source (epoch ms). */
  readonly firstJoinedAt?: number
  /** The earliest `sentAt` of the group's messages in the source (epoch ms). */
  readonly firstSentAt?: number
  /** The earliest member join or group message of the whole source (epoch ms). */
  readonly sourceEarliest?: number
}

export type Mapper<E extends LegacyEntity & Entity> = (record: LegacyRecordOf[E], ctx: MappingContext) => MapResult<E>

export function isSkippedRef(value: unknown): value is SkippedRef {
  return typeof value === 'object' && value !== null && (value as SkippedRef).skipped === true
}

/** Policy → outcome → count. */
export type OutcomeCounts = Record<string, Record<string, number>>

/**
 * Adds outcomes to a tally (a new one unless `into` is given) and returns it. Accepts outcomes or
 * whole results (a rejected result counts nothing here; the pipeline counts rejections by field).
 */
export function tallyOutcomes(from: Iterable<PolicyOutcome | MapResult>, into: OutcomeCounts = {}): OutcomeCounts {
  const add = (o: PolicyOutcome): void => {
    const byOutcome = (into[o.policy] ??= {})
    byOutcome[o.outcome] = (byOutcome[o.outcome] ?? 0) + 1
  }
  for (const x of from) {
    if ('kind' in x) {
      if (x.kind !== 'rejected') {
        for (const o of x.outcomes) {
          add(o)
        }
      }
    } else {
      add(x)
    }
  }
  return into
}
