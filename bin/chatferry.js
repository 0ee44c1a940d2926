#!/usr/bin/env node
// The installed package runs the JavaScript compiled into dist/ at pack time (`npm run build`), on
// Node 22.13+ and 24. A checkout without dist/ runs the TypeScript sources with Node's built-in type
// stripping (Node >= 22.18 outside node_modules), so no build is needed between edit and run.
import { existsSync } from 'node:fs'

// Node 22 flags node:sqlite (the SQLite connector and the demo's legacy database) as experimental
// on every start; that line is noise to an operator. Every other warning is still printed.
const printWarnings = process.listeners('warning')
process.removeAllListeners('warning')
process.on('warning', (warning) => {
  if (warning.name === 'ExperimentalWarning' && /SQLite/.test(warning.message)) {
    return
  }
  for (const listener of printWarnings) {
    listener(warning)
  }
})

const compiled = new URL('../dist/src/cli/main.js', import.meta.url)
await import(existsSync(compiled) ? compiled.href : new URL('../src/cli/main.ts', import.meta.url).href)
