/** Reading the configuration file a command names (`--config`, `$CHATFERRY_CONFIG`, or the default). */
import { readFileSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'

import { ConfigError } from '../errors.ts'
import { parseConfig, type ResolvedConfig } from '../job/config.ts'

export const DEFAULT_CONFIG_FILE = 'chatferry.yaml'

/**
 * The directory the operator typed the command in. `npm run chatferry -- …` runs the script in
 * the package's root, whatever the caller's directory; npm names that directory in `INIT_CWD`.
 * Only trusted for this package's own `chatferry` script: another package's script (or a test
 * runner started by `npm test`) passes an `INIT_CWD` that is not the directory of this command.
 */
export function callerDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const viaNpmScript = env.npm_lifecycle_event === 'chatferry' && env.npm_package_name === 'chatferry'
  return viaNpmScript && env.INIT_CWD ? env.INIT_CWD : process.cwd()
}

/** The configuration file's absolute path: a relative one is relative to the caller's directory. */
export function resolveConfigPath(file: string, env: NodeJS.ProcessEnv = process.env): string {
  return isAbsolute(file) ? file : resolve(callerDirectory(env), file)
}

/**
 * Reads and parses a configuration file. Throws {@link ConfigError} when it is missing or invalid;
 * every message names the absolute path that was tried.
 */
export function loadConfig(
  file: string = DEFAULT_CONFIG_FILE,
  env: NodeJS.ProcessEnv = process.env,
  options: { ledgerOnly?: boolean } = {},
): ResolvedConfig {
  const path = resolveConfigPath(file, env)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    const reason = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory, not a file' : (err as Error).message
    const given = file === path ? '' : `; --config ${file} is taken relative to ${callerDirectory(env)}, the directory the command was run in`
    throw new ConfigError(path, [{ path: '', message: `${reason} (pass --config FILE)${given}` }])
  }
  return parseConfig(text, path, env, options)
}
