/**
 * The one way log lines and progress reach stderr. While a progress bar is drawn
 * (src/cli/progress.ts), a log line is handed to it, and it prints the line above the bar and
 * redraws the bar under it: lines never land inside the bar, and the bar is never left half drawn.
 */

/** What a drawn progress bar offers: print a line above itself. */
export interface TerminalOwner {
  log(line: string): void
}

let owner: TerminalOwner | undefined

/** The bar takes stderr (undefined: it gives it back). */
export function claimTerminal(next: TerminalOwner | undefined): void {
  owner = next
}

/** Writes a log line (ending in a newline) to stderr, above the progress bar if one is drawn. */
export function writeToTerminal(line: string): void {
  if (owner) {
    owner.log(line)
  } else {
    process.stderr.write(line)
  }
}
