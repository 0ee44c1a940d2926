import { ConfigError } from '../errors.ts'

/** A usage error found after the configuration was read (exit code 2, like every configuration error). */
export class UsageError extends ConfigError {
  constructor(message: string) {
    super('chatferry', [{ path: '', message }])
    this.name = 'UsageError'
  }
}
