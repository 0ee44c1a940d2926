/** Reading the configuration file a command names (`--config`, `$CHATFERRY_CONFIG`, or the default). */
import { readFileSync } from 'node:fs'
import { ConfigError } from '../errors.ts'
import { parseConfig, type ResolvedConfig } from '../job/config.ts'

export const DEFAULT_CONFIG_FILE = 'chatferry.yaml'

/** Reads and parses a configuration file. Throws {@link ConfigError} when it is missing or invalid. */
export function loadConfig(file: string = DEFAULT_CONFIG_FILE, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (err as Error).message
    throw new ConfigError(file, [{ path: '', message: `${reason} (pass --config FILE)` }])
  }
  return parseConfig(text, file, env)
}
