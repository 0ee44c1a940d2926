/** Conversations verify lists again message by message, at most (`drill-conversations.ts`; the count report names the limit). */
export const MAX_DRILLED_CONVERSATIONS = 200
