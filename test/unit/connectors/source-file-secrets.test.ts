/**
 * The credentials of the connectors' file sources (`source.fileToken`, `source.files.token`,
 * `source.files.secretAccessKey`, `source.files.s3.secretAccessKey`) are secrets like any other:
 * `<secret>` wherever a configuration is printed or hashed, and scrubbed from configuration
 * problems. (The readers keep them out of locators and errors: connector-file-readers.test.ts and
 * each connector's files test.)
 */
import { describe, expect, it } from 'vitest'

import { secretValuesOf } from '../../../src/job/config.ts'
import { withoutSecrets } from '../../../src/logger.ts'

const TOKEN = 'xoxp-very-secret-token'
const KEY = 'S3-SECRET-KEY-123'

describe.each([
  ['slack-export fileToken', { connector: 'slack-export', path: './x.zip', fileToken: TOKEN }],
  ['generic-sql files.token', { connector: 'generic-sql', files: { kind: 'url', token: TOKEN } }],
  ['mattermost files.secretAccessKey', { connector: 'mattermost', files: { kind: 's3', bucket: 'b', accessKeyId: 'AKIA', secretAccessKey: KEY } }],
  [
    'rocketchat files.s3.secretAccessKey',
    { connector: 'rocketchat', files: { s3: { kind: 's3', bucket: 'b', accessKeyId: 'AKIA', secretAccessKey: KEY } } },
  ],
])('%s', (_name, source) => {
  it('is <secret> in a printed configuration and counted among the secret values', () => {
    const shown = JSON.stringify(withoutSecrets({ source }))
    expect(shown).not.toContain(TOKEN)
    expect(shown).not.toContain(KEY)
    expect(shown).toContain('<secret>')
    const secrets = secretValuesOf({ source })
    expect(secrets.some((s) => s === TOKEN || s === KEY)).toBe(true)
  })
})
