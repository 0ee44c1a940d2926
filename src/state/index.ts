/** The ledger (state store): see `store.ts`. */
export * from './store.ts'
export * from './schema.ts'
