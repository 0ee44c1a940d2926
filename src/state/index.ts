/** The ledger (state store): see `store.ts`. */
export * from './store.ts'
export * from './schema.ts'
export { payloadJsonb, storableText } from './safe-text.ts'
