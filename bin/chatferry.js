#!/usr/bin/env node
// chatferry ships its TypeScript sources and runs them with Node's built-in type stripping
// (Node >= 22.18), so there is no build step between a checkout and a working CLI.
import '../src/cli/main.ts'
