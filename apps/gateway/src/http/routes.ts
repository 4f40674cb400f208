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

/**
 * What a request's method and path resolve to before any handler runs. `template` is the route's
 * path template (`/api/v1/jobs/{job_id}`, `/trpc/execute.execute`, `/trpc/{batch}` for a tRPC
 * batch): the low-cardinality `route` of request logs and metrics.
 */
export type RouteMatch = { kind: 'ok'; template: string } | { kind: 'method_not_allowed'; allow: string; template: string } | { kind: 'not_found' };

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
 * and a known path with another method a 405 with `Allow`, for every method (docs/decisions.md "Errors").
 */
export class RouteTable {
  private readonly routes: Route[] = [];
  private readonly trpcProcedures = new Map<string, 'GET' | 'POST'>();

  /**
   * @param documents paths served with GET (and HEAD) beside the router's REST paths
   * @param raw paths the listener serves itself with the given methods (e.g. `/mcp`: POST)
   */
  constructor(router: AnyTRPCRouter, documents: readonly string[], raw: readonly { path: string; methods: readonly HttpMethod[] }[] = []) {
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
    for (const { path, methods } of raw) byTemplate.set(path, new Set([...methods, ...(byTemplate.get(path) ?? [])]));
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
      const { template } = route;
      return route.methods.has(method) ? { kind: 'ok', template } : { kind: 'method_not_allowed', allow: [...route.methods].join(', '), template };
    }
    return { kind: 'not_found' };
  }

  private matchTrpc(method: string, names: string): RouteMatch {
    const list = names.split(',');
    const wanted = new Set<string>();
    let template = '/trpc/{batch}';
    for (const name of list) {
      const decoded = decodeURIComponentSafe(name);
      const m = this.trpcProcedures.get(decoded);
      if (!m) return { kind: 'not_found' };
      wanted.add(m);
      if (list.length === 1) template = `/trpc/${decoded}`;
    }
    // A batch mixing queries and mutations has no valid method; tRPC itself answers that one.
    const allowed = wanted.size === 1 ? [...wanted][0] : undefined;
    if (method === 'OPTIONS') return { kind: 'ok', template };
    if (allowed ? method === allowed : method === 'GET' || method === 'POST') return { kind: 'ok', template };
    return { kind: 'method_not_allowed', allow: allowed ? `${allowed}, OPTIONS` : 'GET, POST, OPTIONS', template };
  }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
