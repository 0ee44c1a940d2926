import type { z } from 'zod'

import type { ConfigProblem } from './errors.ts'

/** Turns zod issues into path + message pairs, the way configuration problems are reported. */
export function zodProblems(error: z.ZodError, prefix: readonly (string | number)[] = []): ConfigProblem[] {
  return error.issues.map((issue) => {
    const path = [...prefix, ...issue.path].map(String).join('.')
    if (issue.code === 'unrecognized_keys') {
      return { path, message: `unknown key${issue.keys.length === 1 ? '' : 's'}: ${issue.keys.join(', ')}` }
    }
    if (issue.code === 'invalid_type' && issue.input === undefined) {
      return { path, message: 'is required' }
    }
    return { path, message: issue.message }
  })
}
