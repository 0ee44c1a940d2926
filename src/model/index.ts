export * from './records.ts'
export type * from './connector.ts'
