/**
 * What the mappings of a plan look up: the users and groups planned so far (from earlier runs and
 * pages), user names by uid, and the thread parents of the page in hand. Each mapped or skipped
 * record is remembered here for the records after it.
 */
import type { MappedItem, MappingContext, PlannedGroup, PlannedMessage, PlannedUser, SkippedRef } from '../../mappings/index.ts'
import type { LegacyEntity, LegacyMessage, LegacyRecordOf } from '../model/index.ts'
import type { GroupImport, MessageImport, UserImport } from '../target/schemas.ts'
import { plannedGroup, plannedMessage } from './lookups.ts'

export class KnownRecords {
  readonly #users: Map<string, PlannedUser | SkippedRef>
  readonly #groups: Map<string, PlannedGroup | SkippedRef>
  readonly #names = new Map<string, string>()
  /** Thread parents of the page in hand; replies on the same page find their parent here too. */
  #pageMessages = new Map<string, PlannedMessage | SkippedRef>()
  /** Messages of the page in hand, as replies on later pages will look them up. */
  #thisPage = new Map<string, PlannedMessage | SkippedRef>()

  constructor(users: Map<string, PlannedUser | SkippedRef>, groups: Map<string, PlannedGroup | SkippedRef>) {
    this.#users = users
    this.#groups = groups
    for (const u of users.values()) {
      if (!('skipped' in u)) {
        this.#names.set(u.uid, u.name)
      }
    }
  }

  readonly nameOfUid = (uid: string): string | undefined => this.#names.get(uid)

  /** Starts a page whose replies may refer to `parents` (planned on earlier pages). */
  startPage(parents: Map<string, PlannedMessage | SkippedRef>): void {
    this.#pageMessages = parents
    this.#thisPage = new Map()
  }

  /** The page's messages so far, by legacy id (the sink keeps them as thread parents). */
  get thisPage(): ReadonlyMap<string, PlannedMessage | SkippedRef> {
    return this.#thisPage
  }

  /** A mapped (or skipped) thread parent of the page in hand. */
  message(legacyId: string): PlannedMessage | SkippedRef | undefined {
    return this.#pageMessages.get(legacyId)
  }

  /** The lookups of a {@link MappingContext}. */
  lookups(): Pick<MappingContext, 'user' | 'group' | 'message'> {
    return {
      user: (id) => this.#users.get(id),
      group: (id) => this.#groups.get(id),
      message: (id) => this.#pageMessages.get(id),
    }
  }

  /**
   * Remembers a group whose source row was rejected (`field: reason`), for the records that refer
   * to it — unless a row of that legacy id is already planned (a rejected twin of a valid row).
   */
  rememberRejectedGroup(legacyId: string, reason: string): void {
    if (!this.#groups.has(legacyId)) {
      this.#groups.set(legacyId, { skipped: true, policy: 'dependencies', rejected: reason })
    }
  }

  /**
   * Remembers a user whose source row was rejected (`field: reason`): a message or membership that
   * refers to it is rejected naming that reason, never as from an unknown user (nor given a
   * placeholder) — unless a row of that legacy id is already planned.
   */
  rememberRejectedUser(legacyId: string, reason: string): void {
    if (!this.#users.has(legacyId)) {
      this.#users.set(legacyId, { skipped: true, policy: 'dependencies', rejected: reason })
    }
  }

  /** Remembers a record as mapped (its first item) or skipped, for the records that refer to it. */
  remember(entity: LegacyEntity, record: LegacyRecordOf[LegacyEntity], item: MappedItem | undefined, skip: SkippedRef | undefined): void {
    if (entity === 'users') {
      const id = (record as LegacyRecordOf['users']).id
      if (skip) {
        this.#users.set(id, skip)
      } else if (item) {
        const u = item.payload as UserImport
        const username = (record as LegacyRecordOf['users']).username
        const planned: PlannedUser = {
          uid: u.uid,
          name: u.name,
          ...(u.avatar !== undefined ? { avatar: u.avatar } : {}),
          ...(username !== undefined ? { username } : {}),
        }
        this.#users.set(id, planned)
        this.#names.set(planned.uid, planned.name)
      }
    } else if (entity === 'groups') {
      const id = (record as LegacyRecordOf['groups']).id
      if (skip) {
        this.#groups.set(id, skip)
      } else if (item) {
        this.#groups.set(id, plannedGroup(item.payload as GroupImport))
      }
    } else if (entity === 'messages') {
      const id = (record as LegacyMessage).id
      if (typeof id !== 'string' || id === '') {
        return
      }
      const value = skip ?? (item ? plannedMessage(item.payload as MessageImport, this.nameOfUid) : undefined)
      if (value === undefined) {
        return
      }
      this.#pageMessages.set(id, value)
      this.#thisPage.set(id, value)
    }
  }
}
