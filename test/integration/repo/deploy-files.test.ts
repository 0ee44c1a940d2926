/**
 * What can be checked of the container files without a Docker engine or a cluster: that
 * docker-compose.yml and deploy/k8s/*.yaml parse, that every chatferry command and flag they run
 * is one the CLI knows (`chatferry <command> --help` lists it), that their chatferry.yaml passes
 * `config check` with the environment they give it, that the Dockerfile runs the npm steps
 * test/integration/repo/package-install.test.ts runs outside Docker, on every file `npm pack` needs, and
 * that every image they name is pinned (a tag other than `latest`, or a digest).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

import { describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'

import { V8_FLAGS } from '../../../bin/v8-flags.js'

const ROOT = resolve(import.meta.dirname, '../../..')
const CLI = join(ROOT, 'bin/chatferry.js')
const IMAGE = 'chatferry:local'
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')

interface Invocation {
  readonly where: string
  readonly args: readonly string[]
}

function chatferry(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: tmpdir(), env: { ...process.env, ...env }, encoding: 'utf8' })
  return { status: r.status, out: `${r.stdout}${r.stderr}` }
}

type Compose = {
  services: Record<string, { image?: string; command?: string[]; environment?: Record<string, string>; deploy?: { replicas?: number } }>
}
const compose = parse(read('docker-compose.yml'), { merge: true }) as Compose

interface K8sContainer {
  image: string
  args: string[]
}
type K8sDoc = {
  kind: string
  metadata?: { name?: string }
  data?: Record<string, string>
  spec?: {
    replicas?: number
    suspend?: boolean
    jobTemplate?: { spec: { template: { spec: { containers: K8sContainer[] } } } }
    template?: { spec: { containers: K8sContainer[] } }
  }
}
const k8sFiles = readdirSync(join(ROOT, 'deploy/k8s')).filter((f) => f.endsWith('.yaml'))
const k8s = k8sFiles.flatMap((f) =>
  parseAllDocuments(read(`deploy/k8s/${f}`)).map((d) => {
    expect(d.errors, f).toEqual([])
    return { file: f, doc: d.toJS() as K8sDoc }
  }),
)

/** Every chatferry invocation of the compose services and the k8s containers. */
const invocations: Invocation[] = [
  ...Object.entries(compose.services)
    .filter(([, s]) => s.image === IMAGE)
    .map(([name, s]) => ({ where: `docker-compose.yml services.${name}`, args: s.command ?? [] })),
  ...k8s.flatMap(({ file, doc }) =>
    [...(doc.spec?.jobTemplate?.spec.template.spec.containers ?? []), ...(doc.spec?.template?.spec.containers ?? [])]
      .filter((c) => c.image === IMAGE)
      .map((c) => ({ where: `deploy/k8s/${file} ${doc.kind}`, args: c.args })),
  ),
]

/** The command words of an invocation: everything before its first flag (`webhooks receive`). */
const commandOf = (args: readonly string[]) => {
  const firstFlag = args.findIndex((a) => a.startsWith('-'))
  return args.slice(0, firstFlag < 0 ? args.length : firstFlag)
}

/** `${VAR}` and `${VAR:-default}` names in a text. */
const variables = (text: string) => [...text.matchAll(/\$\{([A-Z_][A-Z0-9_]*)(?::-[^}]*)?\}/g)].map((m) => m[1]!)

describe('docker-compose.yml and deploy/k8s', () => {
  it('run the commands of the multi-machine section: a scheduled `run` and N workers, on Postgres, next to the sandbox', () => {
    const commands = invocations.map((i) => commandOf(i.args).join(' '))
    expect(new Set(commands)).toEqual(new Set(['sandbox', 'run', 'worker', 'webhooks receive']))
    expect(compose.services.worker?.deploy?.replicas).toBeGreaterThan(1)
    expect(compose.services.ledger).toBeDefined()
    expect(k8s.map((d) => d.doc.kind).sort()).toEqual(['ConfigMap', 'CronJob', 'CronJob', 'Deployment', 'Deployment', 'Service'])
    expect(k8s.find((d) => d.doc.metadata?.name === 'chatferry-worker')?.doc.spec?.replicas).toBeGreaterThan(1)
  })

  it('the cutover on Kubernetes: the bulk-load CronJob, then the delta CronJob (suspended until the bulk load is done) and the receiver', () => {
    const cron = (name: string) => k8s.find((d) => d.doc.kind === 'CronJob' && d.doc.metadata?.name === name)?.doc
    const argsOf = (name: string) => cron(name)?.spec?.jobTemplate?.spec.template.spec.containers[0]?.args
    expect(argsOf('chatferry-run')).toEqual(['run', '--config', '/etc/chatferry/chatferry.yaml', '--json'])
    expect(argsOf('chatferry-delta')).toEqual(['run', '--delta', '--config', '/etc/chatferry/chatferry.yaml', '--json'])
    expect(cron('chatferry-delta')?.spec?.suspend).toBe(true)
    const receiver = k8s.find((d) => d.doc.metadata?.name === 'chatferry-webhook-receiver' && d.doc.kind === 'Deployment')?.doc
    expect(receiver?.spec?.replicas).toBe(1)
    expect(receiver?.spec?.template?.spec.containers[0]?.args.slice(0, 2)).toEqual(['webhooks', 'receive'])
  })

  it.each(invocations)('$where: `chatferry $args.0` and each of its flags exist', ({ args }) => {
    const command = commandOf(args)
    const help = chatferry([...command, '--help'])
    expect(help.status, help.out).toBe(0)
    expect(help.out).toMatch(new RegExp(`^Usage: chatferry ${command.join(' ')} `, 'm'))
    for (const flag of args.slice(command.length).filter((a) => a.startsWith('--'))) {
      expect(help.out, `${command} ${flag}`).toMatch(new RegExp(`(^|[\\s,])${flag}(?=[\\s=<])`, 'm'))
    }
  })

  it("the compose services' chatferry.yaml passes `config check` with the environment they give it", () => {
    const config = read('deploy/compose/chatferry.yaml')
    const env = compose.services.worker?.environment ?? {}
    for (const name of variables(config)) {
      expect(Object.keys(env), `${name} is used by deploy/compose/chatferry.yaml`).toContain(name)
    }
    const r = chatferry(['config', 'check', '-c', join(ROOT, 'deploy/compose/chatferry.yaml')], {
      CHATFERRY_API_KEY: 'rehearsal-key',
      CHATFERRY_SOURCE_URL: 'postgres://mm:pw@mm-db:5432/mattermost',
    })
    expect(r.status, r.out).toBe(0)
  })

  it("the k8s ConfigMap's chatferry.yaml passes `config check` with the Secret's keys", () => {
    const config = k8s.find((d) => d.doc.kind === 'ConfigMap')?.doc.data?.['chatferry.yaml'] as string
    const secretKeys = [...read('deploy/k8s/cronjob.yaml').matchAll(/--from-literal=([A-Z_]+)=/g)].map((m) => m[1])
    for (const name of variables(config)) {
      expect(secretKeys, `${name} is used by the ConfigMap`).toContain(name)
    }
    const file = join(mkdtempSync(join(tmpdir(), 'chatferry-k8s-')), 'chatferry.yaml')
    writeFileSync(file, config)
    const r = chatferry(['config', 'check', '-c', file], {
      CHATFERRY_API_KEY: 'key',
      CHATFERRY_STATE_URL: 'postgres://chatferry:pw@ledger:5432/chatferry',
      CHATFERRY_SOURCE_URL: 'postgres://mm:pw@mm-db:5432/mattermost',
    })
    expect(r.status, r.out).toBe(0)
  })
})

describe('Dockerfile', () => {
  const lines = read('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => !l.startsWith('#') && l.trim() !== '')
  const runs = lines
    .filter((l) => l.startsWith('RUN '))
    .flatMap((l) =>
      l
        .slice(4)
        .split('&&')
        .map((c) => c.trim().split(/\s+/)),
    )
  const npm = (sub: string) => runs.filter((c) => c[0] === 'npm' && c[1] === sub)
  const test = read('test/integration/repo/package-install.test.ts')
  /** The npm argument lists package-install.test.ts runs. */
  const testNpm = [...test.matchAll(/run\('npm', \[([^\]]*)\]/g)].map((m) => [...m[1]!.matchAll(/'([^']*)'/g)].map((a) => a[1]!))

  it('packs and installs as package-install.test.ts does: `npm pack`, then `npm install -g` of the tarball, same flags', () => {
    const [pack] = npm('pack')
    const [install] = npm('install')
    expect(pack).toBeDefined()
    expect(install).toBeDefined()
    const testPack = testNpm.find((a) => a[0] === 'pack')
    const testInstall = testNpm.find((a) => a[0] === 'install' && a.includes('-g'))
    expect(testPack).toBeDefined()
    expect(testInstall).toBeDefined()
    const flags = (args: readonly string[]) => args.filter((a) => a.startsWith('-'))
    // Where the tarball goes and which prefix it is installed into differ (a temporary directory
    // in the test); every other flag is the same.
    const local = new Set(['--prefix', '--prefer-offline'])
    expect(flags(pack!.slice(2))).toEqual(flags(testPack!.slice(1)).filter((f) => !local.has(f)))
    expect(flags(install!.slice(2)).sort()).toEqual(
      flags(testInstall!.slice(1))
        .filter((f) => !local.has(f))
        .sort(),
    )
    expect(install!.at(-1)).toMatch(/\.tgz$/)
  })

  it("sets chatferry's start-up V8 flags (bin/v8-flags.js) in NODE_OPTIONS, as `npm run chatferry` does; package-install.test.ts runs the installed CLI under them", () => {
    const env = lines.filter((l) => l.startsWith('ENV ')).join(' ')
    const options = /\bNODE_OPTIONS=(\S+|"[^"]*")/.exec(env)?.[1]?.replace(/^"|"$/g, '')
    expect(V8_FLAGS.every((f) => process.allowedNodeEnvironmentFlags.has(f.split('=')[0] as string))).toBe(true)
    expect(options?.split(/\s+/)).toEqual([...V8_FLAGS])
    expect(test).toContain('IMAGE_NODE_OPTIONS')
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> }
    expect(pkg.scripts.chatferry).toBe(`node ${V8_FLAGS.join(' ')} src/cli/main.ts`)
  })

  it('copies every file `npm pack` needs before it runs, installs production dependencies only, runs as `node` with `chatferry` as entrypoint', () => {
    const packAt = lines.findIndex((l) => l.startsWith('RUN npm pack'))
    const copied = lines
      .slice(0, packAt)
      .filter((l) => l.startsWith('COPY ') && !l.includes('--from'))
      .flatMap((l) => l.split(/\s+/).slice(1, -1))
    const pkg = JSON.parse(read('package.json')) as { files: string[] }
    const needed = [
      'package.json',
      'package-lock.json',
      // `npm run build` (prepack): scripts/bundle-cli.ts bundles what src/cli/main.ts imports.
      'scripts',
      'src',
      'connectors',
      'mappings',
      ...pkg.files.filter((f) => !f.startsWith('dist')),
    ]
    for (const f of needed) {
      expect(copied, f).toContain(f)
    }
    // The final stage gets the tarball only; a global install never installs devDependencies.
    const final = lines.slice(lines.findLastIndex((l) => l.startsWith('FROM ')))
    expect(final.filter((l) => l.startsWith('COPY '))).toEqual(['COPY --from=pack /tmp/chatferry.tgz /tmp/chatferry.tgz'])
    expect(final).toContain('USER node')
    expect(final).toContain('ENTRYPOINT ["chatferry"]')
    expect(final).toContain('CMD ["--help"]')
    // What CMD runs is what the package test runs first.
    expect(test).toContain("installed(bin, ['--help'])")
  })
})

/**
 * Why an image reference is not pinned, or undefined when it is: a digest (`@sha256:…`), or a tag
 * other than `latest` (the tag is what follows the last `:` after the last `/`; a registry's port
 * is not a tag).
 */
function unpinnedImage(ref: string): string | undefined {
  if (/@sha256:[0-9a-f]{64}$/.test(ref)) {
    return undefined
  }
  const name = ref.slice(ref.lastIndexOf('/') + 1)
  const colon = name.lastIndexOf(':')
  if (colon < 0) {
    return 'no tag (Docker takes :latest, whatever that is at pull time)'
  }
  const tag = name.slice(colon + 1)
  return tag === 'latest' || tag === '' ? `tag ${tag === '' ? 'empty' : 'latest'}: it moves under a deployment` : undefined
}

describe('every image the deploy files name is pinned', () => {
  it.each([
    ['mcuadros/ofelia:latest', 'tag latest: it moves under a deployment'],
    ['mcuadros/ofelia', 'no tag (Docker takes :latest, whatever that is at pull time)'],
    ['registry.example:5000/team/app', 'no tag (Docker takes :latest, whatever that is at pull time)'],
    ['registry.example:5000/team/app:1.2.3', undefined],
    ['postgres:16-alpine', undefined],
    [`nginx@sha256:${'a'.repeat(64)}`, undefined],
  ])('%s → %s', (ref, problem) => {
    expect(unpinnedImage(ref)).toBe(problem)
  })

  it('docker-compose.yml, deploy/k8s/*.yaml and the Dockerfile: a release tag or a digest, never latest or none', () => {
    const stages = new Set<string>()
    const fromLines = read('Dockerfile')
      .split('\n')
      .filter((l) => /^FROM\s/i.test(l))
      .map((l) => {
        const [, ref, , alias] = l.trim().split(/\s+/)
        const image = stages.has(ref ?? '') ? undefined : ref
        if (alias) {
          stages.add(alias)
        }
        return image
      })
    const images = [
      ...Object.entries(compose.services).map(([name, svc]) => ({ where: `docker-compose.yml services.${name}`, ref: svc.image })),
      ...k8s.flatMap(({ file, doc }) =>
        [...(doc.spec?.jobTemplate?.spec.template.spec.containers ?? []), ...(doc.spec?.template?.spec.containers ?? [])].map((c) => ({
          where: `deploy/k8s/${file} ${doc.kind}`,
          ref: c.image,
        })),
      ),
      ...fromLines.flatMap((ref) => (ref === undefined ? [] : [{ where: 'Dockerfile FROM', ref }])),
    ]
    expect(images.map((i) => i.ref)).toContain('mcuadros/ofelia:0.3.21')
    const problems = images.flatMap(({ where, ref }) => {
      if (ref === undefined) {
        return [`${where}: no image`]
      }
      const problem = unpinnedImage(ref)
      return problem === undefined ? [] : [`${where}: ${ref}: ${problem}`]
    })
    expect(problems).toEqual([])
  })
})
