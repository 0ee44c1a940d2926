/** A failure that no retry can fix (bad API key, wrong URL, an outage past `giveUpAfterMs`): stop the loader. */
export class FatalLoadError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'FatalLoadError'
  }
}
