import type { AnyTRPCRouter } from '@trpc/server';

/** HTTP methods, as written in `Allow` (RFC 9110 10.2.1). */
export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** A path the gateway answers and the methods it accepts there. */
export interface Route {
  /** The path template as documented, e.g. `/api/v1/jobs/{job_id}`. */
  template: string;
  pattern: RegExp;
  methods: ReadonlySet<string>;
}

/** What a request's method and path resolve to before any handler runs. */
export type RouteMatch = { kind: 'ok' } | { kind: 'method_not_allowed'; allow: string } | { kind: 'not_found' };

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `/a/{id}/b` → /^\/a\/[^/]+\/b\/?$/ (a path parameter is one non-empty segment). */
function templatePattern(template: string): RegExp {
  const parts = template.split(/\{[^}]+\}/).map(escapeRegExp);
  return new RegExp(`^${parts.join('[^/]+')}/?$`);
}

interface ProcedureLike {
  _def: { type: 'query' | 'mutation' | 'subscription'; meta?: { openapi?: { method: string; path: string } } };
}

/**
 * The gateway's route table: every REST path documented by the router's OpenAPI meta, the
 * documents served beside it, and `/trpc/{procedure}` (GET for queries, POST for mutations,
 * comma-separated batches allowed). Answers before any handler runs, so an unknown path is a 404
 * and a known path with another method a 405 with `Allow`, for every method (DESIGN "Errors").
 */
export class RouteTable {
  private readonly routes: Route[] = [];
  private readonly trpcProcedures = new Map<string, 'GET' | 'POST'>();

  constructor(router: AnyTRPCRouter, documents: readonly string[]) {
    const byTemplate = new Map<string, Set<string>>();
    const procedures = router._def.procedures as Record<string, ProcedureLike>;
    for (const [name, procedure] of Object.entries(procedures)) {
      const type = procedure._def.type;
      if (type === 'subscription') continue;
      this.trpcProcedures.set(name, type === 'query' ? 'GET' : 'POST');
      const openapi = procedure._def.meta?.openapi;
      if (!openapi) continue;
      const methods = byTemplate.get(openapi.path) ?? new Set<string>();
      methods.add(openapi.method);
      byTemplate.set(openapi.path, methods);
    }
    for (const path of documents) byTemplate.set(path, new Set(['GET', ...(byTemplate.get(path) ?? [])]));
    for (const [template, methods] of byTemplate) {
      if (methods.has('GET')) methods.add('HEAD');
      methods.add('OPTIONS');
      this.routes.push({ template, pattern: templatePattern(template), methods });
    }
  }

  /** Every route (templates and methods), for tests and the fuzz suite. */
  list(): readonly Route[] {
    return this.routes;
  }

  /** Names of the tRPC procedures served at `/trpc/{name}`. */
  procedureNames(): string[] {
    return [...this.trpcProcedures.keys()];
  }

  /** Resolves a request's method and path (no query string). */
  match(method: string, path: string): RouteMatch {
    if (path.startsWith('/trpc/')) return this.matchTrpc(method, path.slice('/trpc/'.length));
    for (const route of this.routes) {
      if (!route.pattern.test(path)) continue;
      return route.methods.has(method) ? { kind: 'ok' } : { kind: 'method_not_allowed', allow: [...route.methods].join(', ') };
    }
    return { kind: 'not_found' };
  }

  private matchTrpc(method: string, names: string): RouteMatch {
    const list = names.split(',');
    const wanted = new Set<string>();
    for (const name of list) {
      const m = this.trpcProcedures.get(decodeURIComponentSafe(name));
      if (!m) return { kind: 'not_found' };
      wanted.add(m);
    }
    // A batch mixing queries and mutations has no valid method; tRPC itself answers that one.
    const allowed = wanted.size === 1 ? [...wanted][0] : undefined;
    if (method === 'OPTIONS') return { kind: 'ok' };
    if (allowed ? method === allowed : method === 'GET' || method === 'POST') return { kind: 'ok' };
    return { kind: 'method_not_allowed', allow: allowed ? `${allowed}, OPTIONS` : 'GET, POST, OPTIONS' };
  }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
