/** The systems `npm run bench -- connector --system <name>` knows; each module default-exports a ConnectorBenchSystem. */
export const BENCH_SYSTEMS: Readonly<Record<string, () => Promise<{ default: import('./system.ts').ConnectorBenchSystem }>>> = {
  mattermost: () => import('./mattermost.ts'),
  rocketchat: () => import('./rocketchat.ts'),
  'nextcloud-talk': () => import('./nextcloud-talk.ts'),
  'nextcloud-talk-postgres': () => import('./nextcloud-talk.ts').then((m) => ({ default: m.onPostgres })),
  zulip: () => import('./zulip.ts'),
  'slack-export': () => import('./slack-export.ts'),
  sendbird: () => import('./sendbird.ts'),
  'stream-chat': () => import('./stream-chat.ts'),
  'stream-chat-json': () => import('./stream-chat.ts').then((m) => ({ default: m.v1 })),
}
