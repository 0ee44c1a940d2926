/**
 * A log line folded to the terminal's width: while progress bars are drawn the terminal does not
 * wrap (cli-progress turns auto-wrap off so its redraws stay in place), so a line longer than the
 * screen would lose its end. `foldLine` breaks it at spaces — inside a long token (a JSON object of
 * fields) after a comma — into lines of at most `columns` visible characters, the later ones
 * indented; a token with no place to break is split where it must. Colour codes take no width and
 * are never split.
 */

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g
/** Continuation lines start with this, so a reader sees they belong to the line above. */
const INDENT = '    '

function width(s: string): number {
  return s.replace(ANSI, '').length
}

/** The line (without its newline) in lines of at most `columns` visible characters, each ending in a newline. */
export function foldLine(line: string, columns: number): string {
  const text = line.endsWith('\n') ? line.slice(0, -1) : line
  if (columns < 20 || width(text) <= columns) {
    return `${text}\n`
  }
  const out: string[] = []
  let current = ''
  const push = (piece: string, sep: string) => {
    if (current !== '' && width(current) + width(sep) + width(piece) > columns) {
      out.push(current)
      current = INDENT + piece
    } else {
      current += current === '' ? piece : sep + piece
    }
  }
  for (const word of text.split(' ')) {
    for (const [i, piece] of pieces(word, columns - INDENT.length).entries()) {
      push(piece, i === 0 ? ' ' : '')
    }
  }
  out.push(current)
  return `${out.join('\n')}\n`
}

/** A word as pieces that each fit in `room`: broken after commas, else where it must (never inside a colour code). */
function pieces(word: string, room: number): string[] {
  if (width(word) <= room) {
    return [word]
  }
  const out: string[] = []
  let piece = ''
  for (const unit of units(word)) {
    if (piece !== '' && width(piece) + width(unit) > room) {
      const comma = piece.lastIndexOf(',')
      if (comma > 0 && comma < piece.length - 1) {
        out.push(piece.slice(0, comma + 1))
        piece = piece.slice(comma + 1)
      } else {
        out.push(piece)
        piece = ''
      }
    }
    piece += unit
  }
  if (piece !== '') {
    out.push(piece)
  }
  return out
}

/** Characters and whole colour codes. */
function units(word: string): string[] {
  // eslint-disable-next-line no-control-regex
  return word.match(/\x1b\[[0-9;?]*[A-Za-z]|[\s\S]/gu) ?? []
}
