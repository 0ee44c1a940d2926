/**
 * Every connector × source the contract suite runs against. A new connector adds one entry here
 * and its env in `test/fixtures/<system>/contract-env.ts`.
 */
import { genericContractEnv } from '../fixtures/generic-sql/contract-env.ts'
import { mattermostContractEnv } from '../fixtures/mattermost/contract-env.ts'
import { nextcloudContractEnv } from '../fixtures/nextcloud-talk/contract-env.ts'
import { rocketChatContractEnv } from '../fixtures/rocketchat/contract-env.ts'
import { sendbirdApiContractEnv, sendbirdExportContractEnv } from '../fixtures/sendbird/contract-env.ts'
import { slackContractEnv } from '../fixtures/slack-export/contract-env.ts'
import { streamApiContractEnv } from '../fixtures/stream-chat/api-contract-env.ts'
import { streamContractEnv } from '../fixtures/stream-chat/contract-env.ts'
import { twilioContractEnv } from '../fixtures/twilio-conversations/contract-env.ts'
import { zulipContractEnv } from '../fixtures/zulip/contract-env.ts'
import type { ContractCase } from './contract-env.ts'
import { noMysqlReason } from './contract-sql.ts'

export const CONTRACT_CASES: readonly ContractCase[] = [
  { title: 'generic-sql × postgres', open: () => genericContractEnv('postgres') },
  { title: 'generic-sql × MariaDB/MySQL', skip: noMysqlReason('mysql'), open: () => genericContractEnv('mysql') },
  { title: 'generic-sql × sqlite', open: () => genericContractEnv('sqlite') },
  { title: 'mattermost × postgres', open: () => mattermostContractEnv('postgres') },
  { title: 'mattermost × MariaDB/MySQL', skip: noMysqlReason('mysql'), open: () => mattermostContractEnv('mysql') },
  { title: 'rocketchat × mongodump directory', open: () => rocketChatContractEnv() },
  { title: 'nextcloud-talk × postgres', open: () => nextcloudContractEnv('postgres') },
  { title: 'nextcloud-talk × MariaDB/MySQL (prefix nc_)', skip: noMysqlReason('mysql'), open: () => nextcloudContractEnv('mysql') },
  { title: 'zulip × postgres (topics: metadata)', open: () => zulipContractEnv() },
  {
    title: 'zulip × postgres (topics: group-per-topic, archived messages read)',
    open: () => zulipContractEnv({ topics: 'group-per-topic', archivedMessages: 'read' }),
  },
  { title: 'slack-export × ZIP', open: () => slackContractEnv('zip') },
  { title: 'slack-export × folder', open: () => slackContractEnv('folder') },
  { title: 'sendbird × Data Export JSON (ZIPs)', open: () => sendbirdExportContractEnv('json', 'zip') },
  { title: 'sendbird × Data Export CSV (folders)', open: () => sendbirdExportContractEnv('csv', 'folder') },
  { title: 'sendbird × Platform API (emulator)', open: () => sendbirdApiContractEnv() },
  { title: 'stream-chat × v1 JSON export', open: () => streamContractEnv('json') },
  { title: 'stream-chat × v2 line-separated export, gzip', open: () => streamContractEnv('jsonl', { gzip: true }) },
  { title: 'stream-chat × REST API (emulator)', open: () => streamApiContractEnv() },
  { title: 'twilio-conversations × REST API (emulator; SMS/WhatsApp participants as users)', open: () => twilioContractEnv('users') },
  { title: 'twilio-conversations × REST API (emulator; SMS/WhatsApp participants dropped)', open: () => twilioContractEnv('drop') },
]
