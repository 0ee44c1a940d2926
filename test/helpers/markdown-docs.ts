/**
 * Reading the project's Markdown the way GitHub renders it, for the documentation test
 * (test/unit/repo/docs-links.test.ts): the anchors a file's headings get (GitHub's slugs), the links a
 * file holds (outside code), the `chatferry <command> --option` mentions in its code, and the
 * configuration keys a reference table names. Each checker returns the problems it found as lines
 * naming the file and what is wrong, so a failing test says what to fix.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

import type { Command } from 'commander'

/** The lines of a Markdown text with the lines of fenced code blocks blanked (`prose`) and only those kept (`code`). */
export function splitFences(markdown: string): { prose: string[]; code: string[] } {
  const prose: string[] = []
  const code: string[] = []
  let fence: string | undefined
  for (const line of markdown.split('\n')) {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence === undefined && opener !== undefined) {
      fence = opener
      prose.push('')
      code.push('')
    } else if (fence !== undefined && line.trim().startsWith(fence)) {
      fence = undefined
      prose.push('')
      code.push('')
    } else {
      prose.push(fence === undefined ? line : '')
      code.push(fence === undefined ? '' : line)
    }
  }
  return { prose, code }
}

/**
 * GitHub's anchor for a heading's text (as github-slugger makes it): the rendered text lowercased,
 * every character but letters, digits, `-`, `_` and spaces removed, spaces turned into `-`.
 */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** Every anchor a Markdown file offers: its headings' slugs (repeats numbered `-1`, `-2` as GitHub does) and `<a id|name>`s. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of splitFences(markdown).prose) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading !== undefined) {
      const slug = githubSlug(heading)
      const n = seen.get(slug) ?? 0
      seen.set(slug, n + 1)
      anchors.add(n === 0 ? slug : `${slug}-${n}`)
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) {
      anchors.add(m[1] as string)
    }
  }
  return anchors
}

/** The `[text](target)` links of a Markdown text outside code (fenced blocks and inline code spans), with their line numbers. */
export function linksOf(markdown: string): { target: string; line: number }[] {
  return splitFences(markdown).prose.flatMap((text, i) =>
    [...text.replace(/`[^`]*`/g, (span) => ' '.repeat(span.length)).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => ({
      target: m[1] as string,
      line: i + 1,
    })),
  )
}

/**
 * The links of `file` (a path relative to `root`) that do not resolve: a relative target that
 * names no file or folder, or an anchor (`#x`, `other.md#x`) that no heading of the Markdown file
 * it points into produces. Absolute URLs are not followed.
 */
export function brokenLinks(root: string, file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8')
  const problems: string[] = []
  for (const { target, line } of linksOf(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      continue
    }
    const [path = '', anchor] = target.split('#', 2)
    const resolved = path === '' ? join(root, file) : join(root, dirname(file), decodeURIComponent(path))
    if (!existsSync(resolved)) {
      problems.push(`${file}:${line}: ${target}: no such file ${relative(root, resolved)}`)
      continue
    }
    if (anchor === undefined || anchor === '' || !resolved.endsWith('.md') || statSync(resolved).isDirectory()) {
      continue
    }
    if (!anchorsOf(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))) {
      problems.push(`${file}:${line}: ${target}: ${relative(root, resolved)} has no heading with the anchor #${anchor}`)
    }
  }
  return problems
}

/** One `chatferry …` command line a document shows: the words after `chatferry` up to the end of its code span or line. */
export interface CommandMention {
  readonly line: number
  readonly words: readonly string[]
  /** Written without `chatferry` (`run --delta --final`): checked only when its first word is a command. */
  readonly bare?: boolean
}

const SPAN_MENTION = /(?:^|[(`]|<\(|npm run (?:-s )?)chatferry (?:-- )?([^`]*)/g
/** A span that reads as a command line without `chatferry`: words, then an option (`fleet run --delta`). */
const BARE_MENTION = /^[a-z][a-z-]*(?: [a-z][a-z-]*)* --[a-z]/
const FENCE_MENTION = /(?:^|[\s(]|<\()chatferry (?:-- )?(.*)$/g

/**
 * The `chatferry <command> …` mentions of a Markdown text: in inline code spans (the span starts
 * with `chatferry`, or `npm run chatferry --`, or it follows `(`; or the span is words and an
 * option, `run --delta --final`, see {@link CommandMention.bare}), and on the lines of fenced code
 * blocks (a shell comment after `#` is not a command). Words run to the end of the span or line,
 * and stop at `;`, `&&`, a shell pipe ` | `, or `#`.
 */
export function commandMentions(markdown: string): CommandMention[] {
  const { prose, code } = splitFences(markdown)
  const out: CommandMention[] = []
  const push = (rest: string, line: number, bare = false) => {
    const segment = rest.split(/;|&&| \| |\s#/)[0] ?? ''
    out.push({ line, words: segment.split(/\s+/).filter((w) => w !== '' && w !== '\\'), ...(bare ? { bare } : {}) })
  }
  prose.forEach((text, i) => {
    for (const span of text.matchAll(/`([^`]+)`/g)) {
      const body = span[1] as string
      for (const m of body.matchAll(SPAN_MENTION)) {
        push(m[1] as string, i + 1)
      }
      if (BARE_MENTION.test(body)) {
        push(body, i + 1, true)
      }
    }
  })
  code.forEach((text, i) => {
    for (const command of text.replace(/^\s*#.*$/, '').split(/;|&&| \| /)) {
      for (const m of command.matchAll(FENCE_MENTION)) {
        push(m[1] as string, i + 1)
      }
    }
  })
  return out
}

const WORD = /^[a-z][a-z-]*$/

/**
 * What is wrong with one mention against the CLI program: a first word that is no command, a word
 * after a command group that is none of its subcommands, or a `--option` the command it follows
 * does not take. A mention whose first word is no word (`chatferry <command>`, `chatferry --help`)
 * names nothing to check.
 */
export function commandProblems(program: Command, mention: CommandMention): string[] {
  const [first, ...rest] = mention.words
  if (first === undefined || !WORD.test(first)) {
    return []
  }
  let command = program.commands.find((c) => c.name() === first)
  if (command === undefined) {
    return mention.bare ? [] : [`chatferry ${first}: no such command`]
  }
  const path = [first]
  const problems: string[] = []
  for (const word of rest) {
    const option = /^(--[a-z][a-z0-9-]*)/.exec(word)?.[1]
    if (command.commands.length > 0 && WORD.test(word)) {
      const sub: Command | undefined = command.commands.find((c) => c.name() === word)
      if (sub === undefined) {
        problems.push(`chatferry ${path.join(' ')} ${word}: no such subcommand (${command.commands.map((c) => c.name()).join(', ')})`)
        break
      }
      command = sub
      path.push(word)
    } else if (option !== undefined && option !== '--help' && !command.options.some((o) => o.long === option)) {
      problems.push(`chatferry ${path.join(' ')}: no option ${option}`)
    }
  }
  return problems
}

/** Every configuration key path (`target.quota.requestsPerMinute`) a zod object schema accepts, `<key>` for a record's keys, `[]` for an array's items. */
export function configKeyPaths(schema: unknown, path: readonly string[] = []): string[] {
  const def = (schema as { _zod?: { def?: Record<string, unknown> } })?._zod?.def
  if (def === undefined) {
    return []
  }
  switch (def.type) {
    case 'optional':
    case 'default':
    case 'prefault':
    case 'nullable':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return configKeyPaths(def.innerType, path)
    case 'pipe':
      return configKeyPaths(def.in, path)
    case 'object':
      return Object.entries((schema as { shape: Record<string, unknown> }).shape).flatMap(([key, value]) => [
        [...path, key].join('.'),
        ...configKeyPaths(value, [...path, key]),
      ])
    case 'array':
      return configKeyPaths(def.element, [...path, '[]'])
    case 'record':
      return configKeyPaths(def.valueType, [...path, '<key>'])
    case 'union':
      return [...new Set((def.options as unknown[]).flatMap((o) => configKeyPaths(o, path)))]
    default:
      return []
  }
}

/**
 * The key paths a reference names in inline code, line by line: full paths (`target.quota.requestsPerMinute`)
 * and, after one on the same line, its siblings written short (`management.url` / `.key` / `.secret`).
 */
export function documentedKeys(markdown: string): Set<string> {
  const keys = new Set<string>()
  for (const line of splitFences(markdown).prose) {
    let parent: string | undefined
    for (const m of line.matchAll(/`([^`\s]+)`/g)) {
      const token = (m[1] as string).replace(/:$/, '')
      if (/^[a-zA-Z][\w<>[\]-]*(\.[\w<>[\]-]+)+$/.test(token)) {
        keys.add(token)
        parent ??= token.slice(0, token.lastIndexOf('.'))
      } else if (parent !== undefined && /^\.[\w<>[\]-]+(\.[\w<>[\]-]+)*$/.test(token)) {
        keys.add(parent + token)
      }
    }
  }
  return keys
}
