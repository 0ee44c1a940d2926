#!/usr/bin/env node
// The installed package runs the JavaScript bundled into dist/chatferry.mjs at pack time (`npm run build`), on
// Node 22.13+ and 24. A checkout without dist/ runs the TypeScript sources with Node's built-in type
// stripping (Node >= 22.18 outside node_modules), so no build is needed between edit and run.
import { existsSync } from 'node:fs'

import { missingV8Flags } from './v8-flags.js'

// Refuse an older Node with what to run instead, before anything that would die with a stack trace
// on it (Node 20 cannot load the sources, and lacks node:sqlite and the APIs the compiled code uses).
const [major, minor] = process.versions.node.split('.').map(Number)
const compiled = new URL('../dist/chatferry.mjs', import.meta.url)
const stripsTypes = major > 22 || (major === 22 && minor >= 18)
const fromCheckout = 'from a checkout, `npm run chatferry -- <command>` runs it on the Node 24 that `npm ci` installs'
if (major < 22 || (major === 22 && minor < 13)) {
  process.stderr.write(
    `chatferry: this is Node ${process.versions.node} (${process.execPath}); chatferry needs Node 22.13 or newer (24 recommended): ` +
      `install it (e.g. \`nvm install 24\`), or ${fromCheckout}\n`,
  )
  process.exit(2)
}
if (!existsSync(compiled) && !stripsTypes) {
  process.stderr.write(
    `chatferry: Node ${process.versions.node} cannot run the TypeScript sources of a checkout (that needs Node 22.18 or newer): ` +
      `${fromCheckout}, or build it once with \`npm run build\`\n`,
  )
  process.exit(2)
}

// The V8 flags chatferry runs under (./v8-flags.js) can only be given at start-up: when they are not
// given already, the process replaces itself with one that has them (`process.execve`, Node 22.15+
// and 24 on POSIX systems): the same process id, so a signal or a SIGKILL meant for chatferry
// still reaches it, and the same arguments, environment and standard streams. Where Node cannot,
// chatferry runs without them (docs/operators-guide.md, "Memory", says how to set them).
const missing = missingV8Flags(process.execArgv, process.env.NODE_OPTIONS)
if (missing.length > 0 && typeof process.execve === 'function' && process.platform !== 'win32') {
  try {
    process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, process.argv[1], ...process.argv.slice(2)], process.env)
  } catch {
    // The exec itself failed (it returns only then): run on, without the flags.
  }
}

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

await import(existsSync(compiled) ? compiled.href : new URL('../src/cli/main.ts', import.meta.url).href)
