/**
 * The fleet file (`fleet.yaml`): the tenants of a fleet, each migrated from its legacy source into
 * its own app. Parsed like chatferry.yaml (`${VAR}` from the environment, every problem listed at
 * once with the tenant and its path, secrets masked, nothing opened) and, per tenant, composed into
 * an ordinary job configuration (defaults ⊕ tenant) validated by the same schemas as chatferry.yaml
 * (src/job/config.ts). A tenant's source is a full `source:` block, or a template over one shared
 * legacy database (`sources:`): generic-sql rows of one tenant column value, or one Mattermost team.
 */
import { readFileSync } from 'node:fs'

import { z } from 'zod'

import { ConfigError, type ConfigProblem } from '../errors.ts'
import {
  checkConfigObject,
  interpolate,
  maskSecrets,
  parseYamlMapping,
  type ResolvedConfig,
  resolvedConfigOf,
  secretValuesOf,
} from '../job/config.ts'
import { NotifySchema } from '../job/notify/config.ts'
import { ManagementSchema, type Region, REGIONS } from '../target/config.ts'
import { APP_NAME_MAX, APP_VERSIONS, Email, isExtensionId, MAX_COLLABORATORS_PER_APP } from '../target/management-schemas.ts'
import { basicAuthNeedsCredentials, CreateWebhookFields, isWebhookTrigger } from '../target/webhooks.ts'
import { type SharedSource, SharedSourceSchema, tenantSourceBlock, TenantSourceSchema } from './tenant-source.ts'

/** A fleet id: part of every tenant's job id (`<fleet>_<tenant>`), so no `_`. */
const FleetId = z.string().regex(/^[a-z0-9](?:[a-z0-9-]{0,22}[a-z0-9])?$/, 'must be 1–24 characters of a-z, 0-9 and - (not at either end)')
/** A tenant id: unique in the fleet; with the fleet id it makes a job id of at most 64 characters. */
const TenantId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,38}$/, 'must be 1–39 characters of a-z, 0-9, - and _, starting with a letter or digit')

const AppName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  // Documented: 100 characters (UTF8mb4). Counted in UTF-16 units, so an emoji counts 2 (the stricter reading).
  .max(APP_NAME_MAX, `must be at most ${APP_NAME_MAX} characters (the platform's limit)`)

const ExtensionName = z.string().refine(isExtensionId, {
  error: (issue) =>
    `unknown extension ${JSON.stringify(String(issue.input).slice(0, 60))}: not in the platform's published extension list (docs/fleets.md)`,
})

const TeamSchema = z
  .object({
    admins: z.array(Email).default([]),
    moderators: z.array(Email).default([]),
  })
  .strict()
  .superRefine((team, ctx) => {
    const all = [...team.admins, ...team.moderators].map((e) => e.toLowerCase())
    if (new Set(all).size > MAX_COLLABORATORS_PER_APP) {
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_COLLABORATORS_PER_APP} team members per app (the platform's limit)` })
    }
    for (const [i, email] of team.moderators.entries()) {
      if (team.admins.some((a) => a.toLowerCase() === email.toLowerCase())) {
        ctx.addIssue({ code: 'custom', path: ['moderators', i], message: `${email} is also an admin: name each member once` })
      }
    }
  })

const Trigger = z.string().refine(isWebhookTrigger, {
  error: (issue) => `unknown trigger ${JSON.stringify(String(issue.input).slice(0, 60))}: not a documented webhook trigger id`,
})

/** A webhook of a tenant's app (the platform's fields) with its triggers: always the version 2 implementation. */
const FleetWebhookSchema = CreateWebhookFields.extend({ triggers: z.array(Trigger).min(1, 'must name at least one trigger') })
  .strict()
  .superRefine(basicAuthNeedsCredentials)
export type FleetWebhook = z.output<typeof FleetWebhookSchema>

/** What provisioning makes of a tenant's app besides creating it. */
const AppSpecSchema = z
  .object({
    /** The app's name on the platform. @default the tenant's name */
    name: AppName.optional(),
    /** Documented: "3" (v3) only. @default "3" */
    version: z.enum(APP_VERSIONS, { error: 'must be "3": the platform creates v3 apps only' }).optional(),
    /** Extension ids to enable. */
    extensions: z.array(ExtensionName).optional(),
    /** Team members (dashboard collaborators) to add, by email. */
    team: TeamSchema.optional(),
    webhooks: z.array(FleetWebhookSchema).optional(),
  })
  .strict()

const JsonObject = z.record(z.string(), z.unknown())

const RegionSchema = z.enum(REGIONS, {
  error: (issue) => `unknown region ${JSON.stringify(issue.input)}: the platform's regions are ${REGIONS.join(', ')}`,
})

/** The per-tenant job settings a tenant or the defaults may set (validated per tenant by the job schemas). */
const JobSettings = {
  /**
   * The `target:` settings but app, region and key (those come from the binding): quota,
   * chatQuota, limits, timeoutMs, and `baseUrl` as a template with `{appId}` and `{region}`.
   */
  target: JsonObject.optional(),
  policies: JsonObject.optional(),
  changes: JsonObject.optional(),
  load: JsonObject.optional(),
}

const DefaultsSchema = z
  .object({
    region: RegionSchema.optional(),
    source: TenantSourceSchema.optional(),
    app: AppSpecSchema.omit({ name: true }).optional(),
    ...JobSettings,
  })
  .strict()

const TenantSchema = z
  .object({
    id: TenantId,
    /** The tenant's display name; the app's name unless `app.name` says otherwise. */
    name: AppName,
    region: RegionSchema.optional(),
    source: TenantSourceSchema.optional(),
    app: AppSpecSchema.optional(),
    ...JobSettings,
  })
  .strict()

export const FleetFileSchema = z
  .object({
    fleet: z.object({ id: FleetId }).strict(),
    /** The shared Postgres ledger: every tenant's job and the bindings. Required for a fleet. */
    state: z
      .object({
        url: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL: a fleet needs the shared Postgres ledger'),
      })
      .strict(),
    /** The management interface (provision, deprovision), and the pace of its calls (src/fleet/management-pacer.ts). */
    management: ManagementSchema.extend({
      requestsPerMinute: z.number().positive().max(6000).optional(),
      giveUpAfterMs: z.number().int().positive().optional(),
    }).optional(),
    defaults: DefaultsSchema.prefault({}),
    /** Hooks `fleet run` tells when a tenant ends needing a fix (`fleet.tenant.needs-fix`; src/fleet/fleet-notify.ts). */
    notify: NotifySchema.optional(),
    /** Prometheus metrics of `fleet run` and `fleet worker` (src/fleet/fleet-metrics.ts), as a job's `metrics:`. */
    metrics: z
      .object({
        /** Port of `GET /metrics` (0: any free port, logged). Absent: no endpoint. */
        port: z.number().int().min(0).max(65535).optional(),
        /** @default 127.0.0.1 */
        host: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
    /** Shared legacy databases the tenants' `source: {template: …}` name. */
    sources: z.record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a source name is 1–64 of A-Z, a-z, 0-9, - and _'), SharedSourceSchema).default({}),
    tenants: z.array(TenantSchema).min(1, 'must list at least one tenant'),
  })
  .strict()

/** The file with each tenant left unparsed, so one bad tenant does not hide the others' problems. */
const FleetTopSchema = FleetFileSchema.extend({ tenants: z.array(z.unknown()).min(1, 'must list at least one tenant') })

type ParsedFleet = z.output<typeof FleetFileSchema>
type ParsedTenant = ParsedFleet['tenants'][number]

/** One tenant after defaults: what provisioning needs. */
export interface FleetTenant {
  readonly id: string
  readonly name: string
  /** `<fleet id>_<tenant id>`: the tenant's ledger job. */
  readonly jobId: string
  readonly region: Region
  readonly appName: string
  readonly version: string
  readonly extensions: readonly string[]
  readonly team: { readonly admins: readonly string[]; readonly moderators: readonly string[] }
  readonly webhooks: readonly FleetWebhook[]
  /** Its index in `tenants:` (for messages). */
  readonly index: number
}

/** A parsed fleet file. */
export interface FleetFile {
  readonly file: string
  readonly id: string
  readonly stateUrl: string
  readonly management: ParsedFleet['management']
  readonly tenants: readonly FleetTenant[]
  /** The parsed document, for {@link tenantJobConfig}. */
  readonly parsed: ParsedFleet
}

/** The app a tenant is bound to, its key opened (src/fleet/tenant-app.ts). */
export interface BoundApp {
  readonly appId: string
  readonly region: Region
  readonly apiKey: string
}

/** The job id of a tenant: `<fleet id>_<tenant id>` (the fleet id has no `_`, so it splits at the first). */
export function tenantJobId(fleetId: string, tenantId: string): string {
  return `${fleetId}_${tenantId}`
}

/** `tenants[3].source.url` from `['tenants', 3, 'source', 'url']`. */
export function fleetPath(path: readonly (string | number)[]): string {
  return path.reduce<string>(
    (out, seg) => (typeof seg === 'number' || /^\d+$/.test(String(seg)) ? `${out}[${seg}]` : out ? `${out}.${seg}` : String(seg)),
    '',
  )
}

function mergeObjects(base: unknown, over: unknown): unknown {
  if (over === undefined) {
    return base
  }
  if (base === null || typeof base !== 'object' || Array.isArray(base) || over === null || typeof over !== 'object' || Array.isArray(over)) {
    return over
  }
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) }
  for (const [k, v] of Object.entries(over)) {
    out[k] = mergeObjects(out[k], v)
  }
  return out
}

function has(obj: unknown, path: readonly string[]): boolean {
  let node = obj
  for (const seg of path) {
    if (node === null || typeof node !== 'object' || !(seg in node)) {
      return false
    }
    node = (node as Record<string, unknown>)[seg]
  }
  return true
}

/** The placeholder app of the validation pass; never part of a configuration a command uses. */
const VALIDATION_APP: BoundApp = { appId: 'fleet-validation', region: 'us', apiKey: 'fleet-validation' }

/** Defaults ⊕ tenant as a raw chatferry.yaml object for `app`. */
function tenantConfigObject(fleet: ParsedFleet, tenant: ParsedTenant, source: unknown, app: BoundApp): Record<string, unknown> {
  const d = fleet.defaults
  const target = mergeObjects(d.target ?? {}, tenant.target ?? {}) as Record<string, unknown>
  const baseUrl = typeof target.baseUrl === 'string' ? target.baseUrl.replaceAll('{appId}', app.appId).replaceAll('{region}', app.region) : undefined
  const out: Record<string, unknown> = {
    target: { ...target, appId: app.appId, region: app.region, apiKey: app.apiKey, ...(baseUrl !== undefined ? { baseUrl } : {}) },
    state: { url: fleet.state.url },
    ...(source !== undefined ? { source } : {}),
    job: { id: tenantJobId(fleet.fleet.id, tenant.id) },
  }
  for (const key of ['policies', 'changes', 'load'] as const) {
    const merged = mergeObjects(d[key], tenant[key])
    if (merged !== undefined) {
      out[key] = merged
    }
  }
  return out
}

/** Where a problem of a tenant's composed job configuration comes from in the fleet file. */
function problemOrigin(fleet: ParsedFleet, index: number, path: string): string {
  const tenant = fleet.tenants[index] as ParsedTenant
  const segs = path.split('.')
  const [head, ...rest] = segs
  if (head === 'source') {
    const own = tenant.source ?? fleet.defaults.source
    const base = tenant.source ? `tenants[${index}].source` : 'defaults.source'
    return own && 'template' in own ? `sources.${own.template}${rest.length ? `.${fleetPath(rest)}` : ''}` : fleetPath([base, ...rest])
  }
  if (head === 'target' || head === 'policies' || head === 'changes' || head === 'load') {
    const from = has(tenant, segs) || !has(fleet.defaults, segs) ? `tenants[${index}]` : 'defaults'
    return fleetPath([from, ...segs])
  }
  return fleetPath([`tenants[${index}]`, ...segs])
}

/** A problem of a tenant's composed configuration, where it is in the file: a tenant's own, or the defaults' or a shared source's (said once for every tenant). */
function originProblem(fleet: ParsedFleet, index: number, p: ConfigProblem): ConfigProblem {
  const path = problemOrigin(fleet, index, p.path)
  return { path, message: path.startsWith('tenants[') ? `tenant ${(fleet.tenants[index] as ParsedTenant).id}: ${p.message}` : p.message }
}

function tenantProblems(fleet: ParsedFleet, index: number, env: NodeJS.ProcessEnv): ConfigProblem[] {
  const tenant = fleet.tenants[index] as ParsedTenant
  const problems: ConfigProblem[] = []
  const spec = tenant.source ?? fleet.defaults.source
  let source: unknown
  if (spec === undefined) {
    problems.push({
      path: `tenants[${index}].source`,
      message: `tenant ${tenant.id}: is required (a source block with connector:, or {template: <name>, …} over a shared source)`,
    })
  } else {
    const block = tenantSourceBlock(spec, fleet.sources)
    if ('problem' in block) {
      problems.push({
        path: `${tenant.source ? `tenants[${index}]` : 'defaults'}.source.${block.field}`,
        message: `tenant ${tenant.id}: ${block.problem}`,
      })
    } else {
      source = block.source
    }
  }
  // Without a usable source the rest is still checked (a job configuration's source is optional).
  const checked = checkConfigObject(tenantConfigObject(fleet, tenant, source, VALIDATION_APP), env)
  if (!checked.ok) {
    problems.push(...checked.problems.map((p) => originProblem(fleet, index, p)))
  }
  return problems
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/** Duplicate tenant ids and app names, and a region neither the tenant nor the defaults give. */
function uniquenessProblems(tenants: readonly unknown[], defaultRegion: unknown): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  const ids = new Map<string, number>()
  const names = new Map<string, number>()
  for (const [i, raw] of tenants.entries()) {
    const t = (raw ?? {}) as { id?: unknown; name?: unknown; region?: unknown; app?: { name?: unknown } }
    const id = text(t.id)
    const first = id === undefined ? undefined : ids.get(id)
    if (id !== undefined && first !== undefined) {
      problems.push({ path: `tenants[${i}].id`, message: `duplicate tenant id ${id} (also tenants[${first}])` })
    } else if (id !== undefined) {
      ids.set(id, i)
    }
    const appName = (text(t.app?.name) ?? text(t.name))?.trim()
    const same = appName === undefined ? undefined : names.get(appName.toLowerCase())
    if (appName !== undefined && same !== undefined) {
      problems.push({
        path: `tenants[${i}].${text(t.app?.name) ? 'app.name' : 'name'}`,
        message: `tenant ${id ?? i}: app name ${JSON.stringify(appName)} is also tenants[${same}]'s: each app needs its own name (provisioning finds an app again by its name)`,
      })
    } else if (appName !== undefined) {
      names.set(appName.toLowerCase(), i)
    }
    if (t.region === undefined && defaultRegion === undefined) {
      problems.push({
        path: `tenants[${i}].region`,
        message: `tenant ${id ?? i}: is required (or set defaults.region): one of ${REGIONS.join(', ')}`,
      })
    }
  }
  return problems
}

function tenantOf(fleet: ParsedFleet, t: ParsedTenant, index: number): FleetTenant {
  const app = { ...fleet.defaults.app, ...t.app }
  return {
    id: t.id,
    name: t.name,
    jobId: tenantJobId(fleet.fleet.id, t.id),
    region: (t.region ?? fleet.defaults.region) as Region,
    appName: (t.app?.name ?? t.name).trim(),
    version: app.version ?? '3',
    extensions: [...new Set(app.extensions ?? [])],
    team: { admins: app.team?.admins ?? [], moderators: app.team?.moderators ?? [] },
    webhooks: app.webhooks ?? [],
    index,
  }
}

/** Problems in the zod sense, with tenant ids named where a path is inside a tenant. */
function schemaProblems(raw: Record<string, unknown>, error: z.ZodError, prefix: readonly (string | number)[] = []): ConfigProblem[] {
  const tenants = Array.isArray(raw.tenants) ? (raw.tenants as unknown[]) : []
  return error.issues.map((issue) => {
    const full = [...prefix, ...issue.path] as (string | number)[]
    const path = fleetPath(full)
    const i = full[0] === 'tenants' && typeof full[1] === 'number' ? full[1] : undefined
    const id = i !== undefined ? (tenants[i] as { id?: unknown } | undefined)?.id : undefined
    const who = typeof id === 'string' ? `tenant ${id}: ` : ''
    if (issue.code === 'unrecognized_keys') {
      return { path, message: `${who}unknown key${issue.keys.length === 1 ? '' : 's'}: ${issue.keys.join(', ')}` }
    }
    if (issue.code === 'invalid_type' && issue.input === undefined) {
      return { path, message: `${who}is required` }
    }
    return { path, message: `${who}${issue.message}` }
  })
}

/**
 * Parses a fleet file's text. Throws {@link ConfigError} listing every problem (file syntax,
 * schema, duplicate ids and app names, each tenant's composed job configuration); does no I/O.
 */
export function parseFleetFile(text: string, file: string, env: NodeJS.ProcessEnv = process.env, options: FleetFileOptions = {}): FleetFile {
  const raw = parseYamlMapping(text, file)
  if (options.management === 'ignored') {
    // Commands that send nothing to the management interface neither read nor check its block:
    // its key and secret (\${VAR}) need not be set where they run.
    delete raw.management
  }
  const problems: ConfigProblem[] = []
  const interpolated = interpolate(raw, env, problems) as Record<string, unknown>
  const secrets = [...secretValuesOf(interpolated), ...secretValuesOf(raw)]
  const unsetAt = new Set(problems.map((p) => p.path))
  for (const p of problems) {
    Object.assign(p, { path: fleetPath(p.path.split('.')) })
  }
  const notUnset = (p: ConfigProblem) => !unsetAt.has(p.path.replace(/\[(\d+)\]/g, '.$1'))
  const top = FleetTopSchema.safeParse(interpolated)
  const rawTenants = Array.isArray(interpolated.tenants) ? (interpolated.tenants as unknown[]) : []
  const tenants = rawTenants.map((t) => TenantSchema.safeParse(t))
  if (!top.success) {
    problems.push(...schemaProblems(interpolated, top.error).filter(notUnset))
  }
  for (const [i, t] of tenants.entries()) {
    if (!t.success) {
      problems.push(...schemaProblems(interpolated, t.error, ['tenants', i]).filter(notUnset))
    }
  }
  problems.push(...uniquenessProblems(rawTenants, (interpolated.defaults as { region?: unknown } | undefined)?.region))
  const parsed = FleetFileSchema.safeParse(interpolated)
  if (top.success) {
    const fleet = { ...top.data, tenants: tenants.map((t) => (t.success ? t.data : undefined)) } as unknown as ParsedFleet
    for (const [i, t] of tenants.entries()) {
      if (t.success) {
        problems.push(...tenantProblems(fleet, i, env))
      }
    }
  }
  if (problems.length > 0 || !parsed.success) {
    const seen = new Set<string>()
    const unique = problems.filter((p) => !seen.has(`${p.path}\n${p.message}`) && seen.add(`${p.path}\n${p.message}`))
    throw new ConfigError(file, maskSecrets(unique, secrets))
  }
  const fleet = parsed.data
  return {
    file,
    id: fleet.fleet.id,
    stateUrl: fleet.state.url,
    management: fleet.management,
    tenants: fleet.tenants.map((t, i) => tenantOf(fleet, t, i)),
    parsed: fleet,
  }
}

/** Reads and parses a fleet file (see {@link parseFleetFile}); a missing file is a {@link ConfigError}. */
/** How a command reads the fleet file. */
export interface FleetFileOptions {
  /** `ignored`: the command sends nothing to the management interface (run, worker, status, plan, verify). @default 'needed' */
  readonly management?: 'needed' | 'ignored'
}

export async function loadFleetFile(path: string, env: NodeJS.ProcessEnv = process.env, options: FleetFileOptions = {}): Promise<FleetFile> {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new ConfigError(path, [{ path: '', message: code === 'ENOENT' ? 'file not found (pass --fleet FILE)' : (err as Error).message }])
  }
  return parseFleetFile(text, path, env, options)
}

/**
 * A tenant's job configuration: defaults ⊕ tenant, its source (a template made concrete), the
 * shared ledger, job id `<fleet>_<tenant>`, and the target: the bound app, its region and key, the
 * base URL (the `target.baseUrl` template, or the platform's). Validated like chatferry.yaml.
 */
export function tenantJobConfig(fleet: FleetFile, tenantId: string, app: BoundApp, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const index = fleet.parsed.tenants.findIndex((t) => t.id === tenantId)
  const tenant = fleet.parsed.tenants[index]
  if (tenant === undefined) {
    throw new ConfigError(fleet.file, [{ path: 'tenants', message: `no tenant ${tenantId} in the fleet file` }])
  }
  const block = tenantSourceBlock((tenant.source ?? fleet.parsed.defaults.source) as z.output<typeof TenantSourceSchema>, fleet.parsed.sources)
  if ('problem' in block) {
    throw new ConfigError(fleet.file, [{ path: `tenants[${index}].source.${block.field}`, message: block.problem }])
  }
  const checked = checkConfigObject(tenantConfigObject(fleet.parsed, tenant, block.source, app), env)
  if (!checked.ok) {
    const problems = checked.problems.map((p) => originProblem(fleet.parsed, index, p))
    throw new ConfigError(fleet.file, maskSecrets(problems, [app.apiKey, ...secretValuesOf(fleet.parsed)]))
  }
  return resolvedConfigOf(checked.data, `${fleet.file} (tenant ${tenantId})`)
}

export type { SharedSource }
