export type * from './connector.ts'
export * from './records.ts'
