/**
 * Twilio Conversations media re-hosted end to end (issue 27): the Twilio fixture served by the
 * emulator (test/fixtures/twilio-conversations/emulator.ts), whose media Content answers with a
 * redirect to a temporary URL serving the file → `chatferry run` as a process with
 * `files.mode: rehost` into an s3rver bucket → the sandbox. The media reader (the connector's
 * `files()`, id `twilio-conversations`) opens each with the account's credentials; every
 * attachment on the sandbox points into the bucket (never at the temporary, expiring URL) and
 * hashes to the media's bytes; the auth token and the store's secret are in neither the ledger
 * nor what the CLI printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { TWILIO_SID, TWILIO_SID_ENV, TWILIO_TOKEN, TWILIO_TOKEN_ENV } from '../../../fixtures/twilio-conversations/contract-env.ts'
import { startTwilioEmulator, type TwilioEmulator } from '../../../fixtures/twilio-conversations/emulator.ts'
import { media, twilioSeed } from '../../../fixtures/twilio-conversations/seed.ts'
import { useCliSuite } from '../../../helpers/cli-suite.ts'
import { expectEveryAttachmentRehosted, expectNoSecrets, ledgerFilesAndReports, rehostJob } from '../../../helpers/connector-rehost.ts'
import { pdfBytes, pngBytes } from '../../../helpers/file-server.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { type S3TestServer, startS3Server } from '../../../helpers/s3-server.ts'

/** The seed's media, of the sizes and types its messages state (the second has no filename: named by its sid). */
const CAT = pngBytes(2048)
const DOC = pdfBytes(4096)

const suite = useCliSuite()
let s3: S3TestServer
let emu: TwilioEmulator

beforeAll(async () => {
  s3 = await startS3Server(['twilio'])
  emu = await startTwilioEmulator(twilioSeed(), {
    accountSid: TWILIO_SID,
    authToken: TWILIO_TOKEN,
    media: new Map([
      [media(1), { bytes: CAT, type: 'image/png' }],
      [media(2), { bytes: DOC, type: 'application/pdf' }],
    ]),
  })
})
afterAll(async () => {
  await emu?.close()
  await s3?.close()
})

describe('Twilio Conversations media re-hosted through the CLI', { timeout: 180_000 }, () => {
  it('media read with the account credentials through its redirect: every attachment in the store, hashing to the media', async () => {
    const job = await rehostJob(suite, s3, {
      bucket: 'twilio',
      source: {
        connector: 'twilio-conversations',
        baseUrl: emu.url,
        mediaBaseUrl: emu.url,
        accountSidEnv: TWILIO_SID_ENV,
        authTokenEnv: TWILIO_TOKEN_ENV,
        requestsPerSecond: 100,
      },
      env: { [TWILIO_SID_ENV]: TWILIO_SID, [TWILIO_TOKEN_ENV]: TWILIO_TOKEN },
    })
    const run = await runCli(['run', '--config', job.cfg], job.env).done
    // 3: the fixture's planted bad rows are rejected; no message waits for a file.
    expect([0, 3], run.stderr.slice(-3000)).toContain(run.code)
    expect(run.stderr).not.toMatch(/wait for .* file/)
    const attachments = await expectEveryAttachmentRehosted(
      suite,
      job.app,
      s3,
      'twilio',
      new Map([
        ['cat.png', CAT],
        [media(2), DOC],
      ]),
    )
    expect(attachments.some((a) => a.url.includes('/temporary/'))).toBe(false)
    expect((await ledgerFilesAndReports(job.stateUrl)).states).toEqual({ copied: 2 })
    await expectNoSecrets(job.stateUrl, [TWILIO_TOKEN, s3.secretAccessKey], [run.stdout, run.stderr])
  })
})
