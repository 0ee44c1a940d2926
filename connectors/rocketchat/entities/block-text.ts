/**
 * The readable text of a message's `blocks` — the UI-kit layout Apps-Engine apps post
 * (`@rocket.chat/ui-kit` `LayoutBlock`), often with `msg` empty: a `section`'s `text` and
 * `fields`, a `context`'s text elements (an image element by its `altText`), a `header`'s text, an
 * `image` block's `title`, `altText` and `imageUrl`, and the blocks a `conditional` block renders.
 * Interactive blocks (`actions`, `input`) and `divider`s carry no content to keep: they give no text.
 */
type Doc = Record<string, unknown>

const isDoc = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A UI-kit text object `{type: 'plain_text' | 'mrkdwn', text}`, or undefined. */
function textOf(v: unknown): string | undefined {
  const t = isDoc(v) ? v.text : undefined
  return typeof t === 'string' && t.trim() !== '' ? t.trim() : undefined
}

const own = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined)

function blockLines(block: Doc): string[] {
  const lines: (string | undefined)[] = []
  switch (block.type) {
    case 'section':
      lines.push(textOf(block.text), ...(Array.isArray(block.fields) ? block.fields.map(textOf) : []))
      break
    case 'context':
      for (const e of Array.isArray(block.elements) ? (block.elements as unknown[]) : []) {
        lines.push(isDoc(e) && e.type === 'image' ? own(e.altText) : textOf(e))
      }
      break
    case 'header':
      lines.push(textOf(block.text))
      break
    case 'image':
      lines.push(textOf(block.title), own(block.altText), own(block.imageUrl))
      break
    case 'conditional':
      for (const b of Array.isArray(block.render) ? (block.render as unknown[]) : []) {
        lines.push(...(isDoc(b) ? blockLines(b) : []))
      }
      break
    default:
      break
  }
  return lines.filter((l): l is string => l !== undefined)
}

/** The blocks' text, one block per line group separated by a blank line, and how many gave text. */
export function blockText(blocks: unknown): { readonly text: string; readonly rendered: number } {
  const parts = (Array.isArray(blocks) ? (blocks as unknown[]) : [])
    .filter(isDoc)
    .map(blockLines)
    .filter((l) => l.length > 0)
  return { text: parts.map((l) => l.join('\n')).join('\n\n'), rendered: parts.length }
}
