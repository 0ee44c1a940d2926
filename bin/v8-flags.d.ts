// Types of ./v8-flags.js (plain JavaScript: the installed command runs it before anything is compiled).
export declare const V8_FLAGS: readonly string[]
export declare function missingV8Flags(execArgv: readonly string[], nodeOptions: string | undefined): string[]
