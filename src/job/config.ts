/**
 * The configuration file of a job (one legacy source → one app): one YAML document, `${VAR}`
 * interpolation from the environment for secrets, parsed once with zod into a deeply frozen
 * {@link ResolvedConfig}. Every problem in the file is collected and reported together, before
 * anything touches the network or a database. Each section's schema belongs to the module that
 * uses it (src/target/config.ts, connectors/, mappings/policies.ts, src/load/config.ts); this
 * module composes them, so nothing below src/job imports it: planning and the reports take the
 * slices they read. Reading the file is the CLI's (src/cli/load-config.ts).
 */
import { type Document, isMap, isScalar, isSeq, LineCounter, parseDocument, type YAMLError } from 'yaml'
import { z } from 'zod'

import { SourceConfigSchema } from '../../connectors/index.ts'
import { PoliciesSchema } from '../../mappings/policies.ts'
import { ConfigError, type ConfigProblem } from '../errors.ts'
import { FilesSchema } from '../files/config.ts'
import type { DeepReadonly } from '../lib.ts'
import { JobConfigSchema, leaseProblems, LoadConfigSchema, resolveLoadConfig } from '../load/config.ts'
import { SECRET_KEYS } from '../logger.ts'
import { ChangesSchema } from '../plan/changes-config.ts'
import { DeltaSchema } from '../plan/delta-config.ts'
import { defaultBaseUrl, ManagementSchema, TargetSchema } from '../target/config.ts'
import { zodProblems } from '../zod-problems.ts'
import { NotifySchema } from './notify/config.ts'

const StateSchema = z
  .object({
    /** Postgres URL of the ledger. When absent, an embedded PGlite database under `dir`. */
    url: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    /** Directory of the embedded store. @default .chatferry */
    dir: z.string().min(1).default('.chatferry'),
  })
  .strict()

export const ConfigSchema = z
  .object({
    target: TargetSchema,
    management: ManagementSchema.optional(),
    state: StateSchema.default({ dir: '.chatferry' }),
    /** The legacy database: `connector` picks the reader (see connectors/<name>/README.md). Needed by plan and run. */
    source: SourceConfigSchema.optional(),
    /** What to do with legacy data the platform cannot take as is; see mappings/README.md. */
    policies: PoliciesSchema.default(PoliciesSchema.parse({})),
    /** What a delta run does with changes to items already on the platform; see mappings/README.md "Changes after the bulk load". */
    changes: ChangesSchema.prefault({}),
    /** How far back before its watermark a delta reads, and how often it reconciles the keys; see docs/cutover.md "Changes after the bulk load". */
    delta: DeltaSchema.prefault({}),
    /** The ledger job; see src/load/README.md. */
    job: JobConfigSchema.optional(),
    /** Loader settings (concurrency, leases, retries); see src/load/README.md. */
    load: LoadConfigSchema.optional(),
    /** The files of the history: rehost (copy into the customer's store), reference, omit; see docs/files.md. */
    files: FilesSchema.prefault({}),
    /** Notification hooks (team chat, generic JSON webhooks); see src/job/notify/config.ts. */
    notify: NotifySchema.optional(),
    /** Prometheus metrics of `run`, `load` and `worker`; see src/load/metrics.ts. */
    metrics: z
      .object({
        /** Port of `GET /metrics` (0: any free port, logged). Absent: no endpoint. */
        port: z.number().int().min(0).max(65535).optional(),
        /** @default 127.0.0.1 */
        host: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
  })
  .strict()

export type ConfigInput = z.input<typeof ConfigSchema>
type Parsed = z.output<typeof ConfigSchema>

/** The configuration after defaults and derived values; deeply frozen. */
export type ResolvedConfig = DeepReadonly<
  Parsed & {
    target: Parsed['target'] & { baseUrl: string }
    /** Absolute path of the file it came from (or `<inline>`). */
    file: string
  }
>

const VAR_PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

/**
 * Replaces `${VAR}` (or `${VAR:-default}`) in every string of `value` with the environment's
 * value. A variable that is unset and has no default is a problem at that path.
 */
export function interpolate(
  value: unknown,
  env: NodeJS.ProcessEnv,
  problems: ConfigProblem[],
  path: string[] = [],
  unused?: (path: readonly string[]) => boolean,
): unknown {
  if (typeof value === 'string') {
    return value.replace(VAR_PATTERN, (whole, name: string, fallback: string | undefined) => {
      const found = env[name]
      if (found !== undefined && found !== '') {
        return found
      }
      if (fallback !== undefined) {
        return fallback
      }
      if (unused?.(path)) {
        // Never used by this command (a read-only one): a marker that reads as what it is.
        return `chatferry-unset-${name}`
      }
      problems.push({ path: path.join('.'), message: `environment variable ${name} is not set (referenced as ${whole})` })
      return ''
    })
  }
  if (Array.isArray(value)) {
    return value.map((v, i) => interpolate(v, env, problems, [...path, String(i)], unused))
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      out[k] = interpolate(v, env, problems, [...path, k], unused)
    }
    return out
  }
  return value
}

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) {
      deepFreeze(v)
    }
  }
  return value
}

const CONFIG_KEY = /^(?:[A-Za-z_][A-Za-z0-9_]{0,63}|\d{1,6})$/

/**
 * The key path (`target.apiKey`) of the innermost mapping entry whose key or value spans
 * `offset`: where a YAML syntax error sits, named without showing the text around it.
 */
function keyPathAt(doc: Document, offset: number): string {
  const path: string[] = []
  let node: unknown = doc.contents
  for (;;) {
    if (!isMap(node) && !isSeq(node)) {
      break
    }
    let next: unknown
    for (const [i, item] of (node.items as unknown[]).entries()) {
      const pair = isMap(node) ? (item as { key: unknown; value: unknown }) : { key: undefined, value: item }
      const end = (pair.value as { range?: number[] } | null)?.range?.[2] ?? (pair.key as { range?: number[] } | null)?.range?.[2]
      const start = (pair.key as { range?: number[] } | null)?.range?.[0] ?? (pair.value as { range?: number[] } | null)?.range?.[0]
      if (start === undefined || end === undefined || offset < start || offset > end) {
        continue
      }
      // Only names that look like configuration keys: broken YAML can turn a value into a key.
      const name = isMap(node) ? (isScalar(pair.key) ? String(pair.key.value) : '') : String(i)
      if (!CONFIG_KEY.test(name)) {
        return path.join('.')
      }
      path.push(name)
      next = pair.value
    }
    if (next === undefined) {
      break
    }
    node = next
  }
  return path.join('.')
}

/**
 * One YAML syntax error as a problem: file:line:column, the key path, and the parser's message
 * without its code frame and with any quoted source text masked, since the lines of a
 * configuration file may hold a password or an API key.
 */
function yamlProblem(err: YAMLError, doc: Document, file: string): ConfigProblem {
  const where = err.linePos?.[0]
  const first = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')
  const masked = first.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '"…"')
  return {
    path: keyPathAt(doc, err.pos[0]),
    message: `YAML syntax error at ${file}${where ? `:${where.line}:${where.col}` : ''}: ${masked} (${err.code})`,
  }
}

/**
 * The values of a configuration that may be secrets: values under secret keys (apiKey, key,
 * secret, password, …; `policies` holds only choices) and the user info of URLs. Problems are
 * scrubbed of them, whatever message a validator wrote.
 */
export function secretValuesOf(value: unknown, path: readonly string[] = []): string[] {
  if (typeof value === 'string') {
    const out: string[] = []
    if (path[0] !== 'policies' && SECRET_KEYS.has(path.at(-1) ?? '')) {
      out.push(value)
    }
    const password = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s:]*:([^/@\s]*)@/i.exec(value)?.[1]
    if (password) {
      out.push(password, decodeURIComponentSafe(password))
    }
    return out.filter((s) => s.length >= 3)
  }
  if (Array.isArray(value)) {
    return value.flatMap((v, i) => secretValuesOf(v, [...path, String(i)]))
  }
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => secretValuesOf(v, [...path, k]))
  }
  return []
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** Problems with every secret value replaced by `***` (longest first, so no part survives). */
export function maskSecrets(problems: readonly ConfigProblem[], secrets: readonly string[]): ConfigProblem[] {
  const sorted = [...new Set(secrets)].sort((a, b) => b.length - a.length)
  const mask = (text: string) => sorted.reduce((t, s) => t.split(s).join('***'), text).replace(/(\/\/[^:/@\s]+):[^@\s]*@/g, '$1:***@')
  return problems.map((p) => ({ path: p.path, message: mask(p.message) }))
}

/**
 * The checks that span sections (a lease must outlast a request), with `load:` resolved the way
 * the ledger commands resolve it (file, then `CHATFERRY_LOAD_*`). `config check` and every
 * command run these same checks through {@link parseConfig}.
 */
function crossFieldProblems(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): ConfigProblem[] {
  const fileLoad = (raw.load ?? {}) as Record<string, unknown>
  let fromEnv: ConfigProblem[] = []
  try {
    resolveLoadConfig(fileLoad, {}, env)
  } catch (err) {
    // The file's own `load:` problems come from the schema; the environment's are news here.
    if (LoadConfigSchema.safeParse(fileLoad).success && err instanceof ConfigError) {
      fromEnv = [...err.problems]
    }
  }
  const envLease = env.CHATFERRY_LOAD_LEASE_SECONDS
  const lease = LoadConfigSchema.shape.leaseSeconds.safeParse(envLease !== undefined && envLease !== '' ? Number(envLease) : fileLoad.leaseSeconds)
  const timeout = TargetSchema.shape.timeoutMs.safeParse((raw.target as Record<string, unknown> | undefined)?.timeoutMs)
  return [...fromEnv, ...(lease.success && timeout.success ? leaseProblems(lease.data, timeout.data) : [])]
}

/** What a document with syntax errors still says, for finding the secrets to mask. */
function partialJs(doc: Document): unknown {
  try {
    return doc.toJS()
  } catch {
    return undefined
  }
}

/**
 * Parses YAML text into a mapping; throws {@link ConfigError} listing every syntax error (each
 * without the source line, and masked of the values that may be secrets). Does no I/O.
 */
export function parseYamlMapping(text: string, file: string): Record<string, unknown> {
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter })
  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      maskSecrets(
        doc.errors.map((err) => yamlProblem(err, doc, file)),
        secretValuesOf(partialJs(doc)),
      ),
    )
  }
  const raw = doc.toJS() ?? {}
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, [{ path: '', message: 'the file must be a YAML mapping (key: value)' }])
  }
  return raw as Record<string, unknown>
}

/**
 * Validates an interpolated configuration object: the schema and the checks that span sections.
 * Returns the parsed configuration, or the problems (unmasked: the caller masks them).
 */
export function checkConfigObject(
  interpolated: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): { ok: true; data: Parsed } | { ok: false; problems: ConfigProblem[] } {
  const parsed = ConfigSchema.safeParse(interpolated)
  const problems = [
    ...(parsed.success ? [] : zodProblems(parsed.error, [], { schema: ConfigSchema, input: interpolated })),
    ...crossFieldProblems(interpolated, env),
  ]
  return parsed.success && problems.length === 0 ? { ok: true, data: parsed.data } : { ok: false, problems }
}

/** The parsed configuration with its derived values (the default base URL), deeply frozen. */
export function resolvedConfigOf(data: Parsed, file: string): ResolvedConfig {
  return deepFreeze({
    ...data,
    target: { ...data.target, baseUrl: (data.target.baseUrl ?? defaultBaseUrl(data.target.appId, data.target.region)).replace(/\/+$/, '') },
    file,
  }) as ResolvedConfig
}

/**
 * Parses configuration text. Throws {@link ConfigError} listing every problem; does no I/O.
 * No problem repeats a secret of the file: YAML errors come without source lines, and every
 * message is scrubbed of the values that may be secrets.
 * @param file used in messages and kept in the result.
 * @param options.ledgerOnly for the commands that only read the ledger (`status`, `rejects`,
 *   `runs`): an unset variable outside `state:` and `job:` (the API key, the source's or the
 *   management's secrets) is no problem — the command never uses it — and becomes
 *   `chatferry-unset-<NAME>`, which no request ever carries.
 */
export function parseConfig(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
  options: { ledgerOnly?: boolean } = {},
): ResolvedConfig {
  const problems: ConfigProblem[] = []
  const raw = parseYamlMapping(text, file)
  const unused = options.ledgerOnly ? (path: readonly string[]) => path[0] !== 'state' && path[0] !== 'job' : undefined
  const interpolated = interpolate(raw, env, problems, [], unused) as Record<string, unknown>
  const checked = checkConfigObject(interpolated, env)
  if (!checked.ok) {
    // A value built from an unset variable fails the schema too; the unset variable is the news.
    const unsetAt = new Set(problems.map((p) => p.path))
    problems.push(...checked.problems.filter((p) => !unsetAt.has(p.path)))
  }
  if (problems.length > 0 || !checked.ok) {
    throw new ConfigError(file, maskSecrets(problems, [...secretValuesOf(interpolated), ...secretValuesOf(raw)]))
  }
  return resolvedConfigOf(checked.data, file)
}
