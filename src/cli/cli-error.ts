/**
 * An error that ends a command with a given exit code and a message written as is
 * (`chatferry: <message>`), for the outcomes a scheduler must tell apart: an unknown job, nothing
 * planned, a target that refuses the API key. Messages never contain secrets.
 */
import { EXIT } from './exit-codes.ts'

export class CliError extends Error {
  readonly exitCode: number
  constructor(message: string, exitCode: number = EXIT.USAGE) {
    super(message)
    this.name = 'CliError'
    this.exitCode = exitCode
  }
}
