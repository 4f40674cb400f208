import { type HttpContext, jsonOf, request } from './http.js';
import { GatewayError, GatewayRequestError, UnknownCapabilityError } from './errors.js';
import { parseProblem } from './protocol.js';
import type { Capability, Registry } from './types.js';

/** Options of registry reads. */
export interface RegistryReadOptions {
  /** Fetch `/registry` again instead of using the cached copy. */
  refresh?: boolean;
}

/**
 * `GET /registry` (docs/spec-notes.md 4 "legacy registry"), uncached. Throws {@link GatewayRequestError} when the
 * gateway cannot be reached or the document has no `capabilities` array, {@link GatewayError} on
 * an error status.
 */
export async function fetchRegistry(ctx: HttpContext): Promise<Registry> {
  const r = await request(ctx, '/registry');
  if (!r.response.ok) throw new GatewayError(parseProblem(r.response.status, r.text));
  const doc = jsonOf<Registry>(ctx, '/registry', r);
  if (!doc || !Array.isArray(doc.capabilities)) {
    throw new GatewayRequestError(`${ctx.baseUrl}/registry`, 'The gateway /registry document has no capabilities array.', { status: r.response.status });
  }
  return doc;
}

/**
 * The `/registry` document of one gateway, kept for `ttlMs` (the gateway caches it 60 s too);
 * concurrent reads share one request.
 */
export class RegistryCache {
  private cached: { doc: Registry; at: number } | undefined;
  private inflight: Promise<Registry> | undefined;

  constructor(
    private readonly ctx: HttpContext,
    readonly ttlMs = 60_000,
  ) {}

  private fresh(): boolean {
    return this.cached !== undefined && Date.now() - this.cached.at < this.ttlMs;
  }

  /** The document (cached unless `refresh`). Errors as {@link fetchRegistry}. */
  async get(opts: RegistryReadOptions = {}): Promise<Registry> {
    if (!opts.refresh && this.fresh()) return this.cached!.doc;
    this.inflight ??= fetchRegistry(this.ctx)
      .then((doc) => {
        this.cached = { doc, at: Date.now() };
        return doc;
      })
      .finally(() => {
        this.inflight = undefined;
      });
    return this.inflight;
  }

  /**
   * One capability by id. When it is missing from a cached copy, the registry is fetched again
   * once; then throws {@link UnknownCapabilityError} (with the ids available).
   */
  async capability(id: string, opts: RegistryReadOptions = {}): Promise<Capability> {
    const wasCached = !opts.refresh && this.fresh();
    let doc = await this.get(opts);
    let found = doc.capabilities.find((c) => c.id === id);
    if (!found && wasCached) {
      doc = await this.get({ refresh: true });
      found = doc.capabilities.find((c) => c.id === id);
    }
    if (!found) throw new UnknownCapabilityError(id, { available: doc.capabilities.map((c) => c.id) });
    return found;
  }
}
