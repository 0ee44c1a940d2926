/**
 * The `policies:` the end-to-end oracle (expected-items.ts) understands, with the defaults
 * docs/configuration.md documents. Only the options the end-to-end tests set are taken; any other
 * key throws, so a test that sets one learns that the oracle does not state its effect yet (rather
 * than comparing against the default's).
 */
import type { PoliciesInput } from '../../mappings/index.ts'

export interface OraclePolicies {
  readonly retention: { readonly retentionDays: number; readonly oldMessages: 'skip' | 'send' }
  readonly deletes: { readonly mode: 'skip' | 'tombstone'; readonly tombstoneText: string }
  readonly systemMessages: { readonly mode: 'skip' | 'as-user'; readonly uid: string; readonly name: string }
  readonly threads: { readonly replies: 'flatten' | 'skip'; readonly quoteParent: number }
  readonly bots: { readonly mode: 'keep' | 'skip'; readonly tag: string }
  readonly archivedGroups: { readonly mode: 'keep' | 'skip'; readonly tag: string }
  readonly missingUsers: { readonly name: string; readonly uidPrefix: string; readonly tag: string }
}

const UNDERSTOOD: Record<string, readonly string[]> = {
  retention: ['retentionDays', 'oldMessages'],
  deletes: ['mode', 'tombstoneText'],
  systemMessages: ['mode', 'systemUser'],
  threads: ['replies', 'quoteParent'],
  bots: ['mode', 'tag'],
  archivedGroups: ['mode', 'tag'],
  missingUsers: ['name', 'uidPrefix', 'tag'],
}

type Section = Record<string, unknown> | undefined

/** The documented defaults, overridden by `input`; throws on an option the oracle does not model. */
export function oraclePolicies(input: PoliciesInput): OraclePolicies {
  const p = input as Record<string, Section>
  for (const [key, value] of Object.entries(p)) {
    const known = UNDERSTOOD[key]
    const unknown = known === undefined ? [key] : Object.keys(value ?? {}).filter((k) => !known.includes(k))
    if (unknown.length > 0) {
      throw new Error(`expected-items: the oracle does not model policies.${key}${known ? `.${unknown.join(', ')}` : ''}`)
    }
  }
  const s = (k: string) => p[k] ?? {}
  const quote = s('threads').quoteParent
  const systemUser = (s('systemMessages').systemUser ?? {}) as { uid?: string; name?: string }
  return {
    retention: { retentionDays: 183, oldMessages: 'skip', ...s('retention') } as OraclePolicies['retention'],
    deletes: { mode: 'skip', tombstoneText: 'This message was deleted.', ...s('deletes') } as OraclePolicies['deletes'],
    systemMessages: {
      mode: (s('systemMessages').mode as 'skip' | 'as-user' | undefined) ?? 'skip',
      uid: systemUser.uid ?? 'system',
      name: systemUser.name ?? 'System',
    },
    threads: {
      replies: (s('threads').replies as 'flatten' | 'skip' | undefined) ?? 'flatten',
      quoteParent: quote === true ? 12 : typeof quote === 'number' ? quote : 0,
    },
    bots: { mode: 'keep', tag: 'bot', ...s('bots') } as OraclePolicies['bots'],
    archivedGroups: { mode: 'keep', tag: 'archived', ...s('archivedGroups') } as OraclePolicies['archivedGroups'],
    missingUsers: {
      name: 'Unknown user {id}',
      uidPrefix: 'placeholder-',
      tag: 'placeholder',
      ...s('missingUsers'),
    } as OraclePolicies['missingUsers'],
  }
}
