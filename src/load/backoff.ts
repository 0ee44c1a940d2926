/**
 * The loader's one backoff policy (p-retry options): jittered exponential, 250 ms doubling up to
 * 8 s, each wait drawn between the step and twice it. The import lane's requests wait by it
 * (send-batch.ts), and so do both lanes' loop-level ledger operations (ledger-retry.ts).
 */
export const RETRY_BACKOFF = { factor: 2, minTimeout: 250, maxTimeout: 8000, randomize: true } as const
