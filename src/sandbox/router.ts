/**
 * Path routing for the sandbox: patterns like `/apps/:appId/webhooks/:webhookId`, matched segment
 * by segment. A path that matches a pattern under another method is "method not allowed", not
 * "not found".
 */
import type { Reply, RequestContext } from './http-kit.ts'

/** The methods the sandbox's routes use. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const
export type HttpMethod = (typeof HTTP_METHODS)[number]

/** A route's handler: answers or throws an HttpError. */
export type Handler = (ctx: RequestContext) => Promise<Reply>

/** One method on one path pattern. */
export interface Route {
  readonly method: HttpMethod
  /** Segments separated by `/`; `:name` captures one segment. */
  readonly pattern: string
  readonly handler: Handler
  /** Whether the handler needs the body (POST/PUT); others never read it. */
  readonly readsBody?: boolean
}

/** What the router found for a method and path. */
export type RouteMatch =
  | { readonly kind: 'found'; readonly route: Route; readonly params: Record<string, string> }
  | { readonly kind: 'method-not-allowed'; readonly allow: readonly string[] }
  | { readonly kind: 'not-found' }

interface CompiledRoute {
  readonly route: Route
  readonly segments: readonly string[]
}

/** Matches requests against the routes. */
export interface Router {
  match(method: string, path: string): RouteMatch
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s !== '')
}

/** A router over `routes` (first match wins). */
export function createRouter(routes: readonly Route[]): Router {
  const compiled: CompiledRoute[] = routes.map((route) => ({ route, segments: split(route.pattern) }))
  return {
    match(method, path) {
      let segments: string[]
      try {
        segments = split(path).map((s) => decodeURIComponent(s))
      } catch {
        return { kind: 'not-found' }
      }
      const allow: string[] = []
      for (const c of compiled) {
        if (c.segments.length !== segments.length) {
          continue
        }
        const params: Record<string, string> = {}
        let ok = true
        for (let i = 0; i < segments.length; i++) {
          const want = c.segments[i] as string
          const got = segments[i] as string
          if (want.startsWith(':')) {
            params[want.slice(1)] = got
          } else if (want !== got) {
            ok = false
            break
          }
        }
        if (!ok) {
          continue
        }
        if (c.route.method === method) {
          return { kind: 'found', route: c.route, params }
        }
        allow.push(c.route.method)
      }
      return allow.length > 0 ? { kind: 'method-not-allowed', allow: [...new Set(allow)] } : { kind: 'not-found' }
    },
  }
}
