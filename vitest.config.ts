import { availableParallelism } from 'node:os'
import { join } from 'node:path'

import { defineConfig } from 'vitest/config'

/**
 * Integration files spend most of their time waiting (quota windows, child CLI processes, SIGKILL
 * and resume scenarios, webhook retries, pg-boss's minute slots), not computing, so several run at
 * once even on a 2-core machine; vitest's default (cores − 1) would run them one after another.
 * Every file has its own databases, sandbox, ports and temporary directories, so they do not meet.
 * Four at least, one per core on a bigger machine (the CLI processes they start are CPU-bound).
 * `CHATFERRY_TEST_WORKERS=N` sets another number (1: one after another).
 */
const integrationWorkers = Number(process.env.CHATFERRY_TEST_WORKERS ?? Math.max(4, availableParallelism()))

export default defineConfig({
  test: {
    globalSetup: ['./test/global-setup.ts'],
    allowOnly: !process.env.CI,
    env: {
      // The CLI processes the tests start (hundreds) keep V8's compiled code here: each starts in
      // about half the CPU time. Node ignores the cache when its sources changed.
      NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? join(import.meta.dirname, 'node_modules/.cache/node-compile-cache'),
    },
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          maxWorkers: integrationWorkers,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
})
