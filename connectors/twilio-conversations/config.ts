/**
 * Settings of the Twilio Conversations connector (`source.connector: twilio-conversations`): where
 * the API is, which environment variables hold the Account SID and auth token, which Conversation
 * Services to read, the pace, and the policy for SMS/WhatsApp participants.
 */
import { z } from 'zod'

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')

export const TwilioConversationsConfigSchema = z
  .object({
    connector: z.literal('twilio-conversations'),
    /** The Conversations API. @default https://conversations.twilio.com */
    baseUrl: z.url().default('https://conversations.twilio.com'),
    /** The Media Content Service, where media messages' files are. @default https://mcs.us1.twilio.com */
    mediaBaseUrl: z.url().default('https://mcs.us1.twilio.com'),
    /** The environment variable holding the Account SID (`AC…`). @default TWILIO_ACCOUNT_SID */
    accountSidEnv: envName.default('TWILIO_ACCOUNT_SID'),
    /** The environment variable holding the auth token. @default TWILIO_AUTH_TOKEN */
    authTokenEnv: envName.default('TWILIO_AUTH_TOKEN'),
    /** The Conversation Services (`IS…`) to read; absent: every service of the account. */
    services: z
      .array(z.string().regex(/^IS[0-9a-fA-F]{32}$/, 'must be a Conversation Service SID (IS…)'))
      .min(1)
      .optional(),
    /** Requests per second (Twilio limits concurrency per account; requests are sent one at a time). @default 20 */
    requestsPerSecond: z.number().min(0.1).max(100).default(20),
    /** Retries of one request after a 429 (Twilio 20429), a 5xx or a network failure. @default 8 */
    maxRetries: z.number().int().min(0).max(50).default(8),
    /** Twilio's `PageSize` (at most 100 here). @default 100 */
    apiPageSize: z.number().int().min(1).max(100).default(100),
    /** Rows per page. @default 1000 */
    pageSize: z.number().int().min(1).max(50_000).default(1000),
    /**
     * SMS and WhatsApp participants (a `messaging_binding`, no identity): `users` makes each a user
     * named by its address (a phone number); `drop` leaves them out — their memberships and
     * messages are rejected with that reason. @default users
     */
    nonChatParticipants: z.enum(['users', 'drop']).default('users'),
  })
  .strict()
export type TwilioConversationsConfig = z.output<typeof TwilioConversationsConfigSchema>
