/**
 * The platform's sample data: an app created through the management interface without
 * `skipSampleData: true` is filled with it (cometchat/docs `management-apis.json`, create app:
 * "skips sample data if it is set true"). The five sample users' ids are published ("We have
 * set-up 5 users for testing having UIDs: cometchat-uid-1 … cometchat-uid-5", the SDK setup
 * pages of cometchat/docs); their names here are assumed (the vendor's sample apps show these).
 * One list, so the sandbox fills a new app with it and `verify` tells it apart from migrated data.
 */

export interface SampleUser {
  readonly uid: string
  readonly name: string
}

export const SAMPLE_USERS: readonly SampleUser[] = [
  { uid: 'cometchat-uid-1', name: 'Andrew Joseph' },
  { uid: 'cometchat-uid-2', name: 'George Alan' },
  { uid: 'cometchat-uid-3', name: 'Nancy Grace' },
  { uid: 'cometchat-uid-4', name: 'Susan Marie' },
  { uid: 'cometchat-uid-5', name: 'John Paul' },
]

const SAMPLE_UIDS = new Set(SAMPLE_USERS.map((u) => u.uid))

/** True for a uid of the platform's sample users. */
export function isSampleUid(uid: string): boolean {
  return SAMPLE_UIDS.has(uid)
}
