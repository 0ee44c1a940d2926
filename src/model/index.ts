export type * from './connector.ts'
export * from './files.ts'
export * from './records.ts'
