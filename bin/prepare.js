#!/usr/bin/env node
// `npm ci` / `npm install` in a checkout (the package's `prepare` script): warm the sandbox's store
// template so the first `chatferry sandbox` starts fast. Plain JavaScript, because it may run on a
// Node that cannot strip types (a system Node 20 under `npm ci --omit=dev`, where the Node 24 dev
// dependency is absent). Never fails the install: without the template the sandbox only starts slower.
import { existsSync } from 'node:fs'

const compiled = new URL('../dist/warm-cache.mjs', import.meta.url)
const source = new URL('../src/sandbox/warm-cache.ts', import.meta.url)
const [major, minor] = process.versions.node.split('.').map(Number)
const stripsTypes = major > 22 || (major === 22 && minor >= 18)
try {
  if (existsSync(compiled)) {
    await import(compiled.href)
  } else if (stripsTypes) {
    await import(source.href)
  } else {
    process.stderr.write(`chatferry: Node ${process.versions.node} cannot run the sources; the sandbox template is built on first use\n`)
  }
} catch (err) {
  process.stderr.write(`chatferry: could not prepare the sandbox template (${err instanceof Error ? err.message : String(err)})\n`)
}
