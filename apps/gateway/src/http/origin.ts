import type { IncomingMessage } from 'node:http';

/** Hosts that name this machine's loopback interface. */
const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Which web origins may act on the gateway from a browser (docs/configuration.md →
 * `ALLOWED_ORIGINS`; MCP Streamable HTTP transport: servers MUST validate `Origin` against DNS
 * rebinding): the origin of `PUBLIC_BASE_URL`, the configured `ALLOWED_ORIGINS`, and, when the
 * public base URL is a loopback host (`localhost`, `127.0.0.1`, `[::1]`), the same scheme and port
 * on the other loopback names (a developer opening `http://localhost:8080` of a gateway whose base
 * URL is `http://127.0.0.1:8080`). A request without `Origin` (an agent, curl, an SDK) is
 * always allowed: browsers send it on every cross-origin request and on every POST.
 * `Origin: null` (sandboxed frames, file: pages) is foreign.
 */
export class OriginPolicy {
  private cachedBase = '';
  private cachedAllowed = new Set<string>();

  /**
   * @param publicBaseUrl the gateway's public base URL (read at each check: a gateway on port 0
   *   learns its URL after listening)
   * @param extra serialized origins from ALLOWED_ORIGINS (`https://app.example.com`)
   */
  constructor(
    private readonly publicBaseUrl: () => string,
    private readonly extra: readonly string[] = [],
  ) {}

  /** Whether a request with this `Origin` header value (undefined: none sent) may act. */
  allows(origin: string | undefined): boolean {
    if (origin === undefined) return true;
    return this.allowed().has(origin.trim().toLowerCase());
  }

  /** The `Origin` of `req` when it is sent and foreign, else undefined. */
  foreignOrigin(req: IncomingMessage): string | undefined {
    const origin = req.headers.origin;
    return origin !== undefined && !this.allows(origin) ? origin : undefined;
  }

  /** The allowed origins, lower case (for docs and tests). */
  list(): string[] {
    return [...this.allowed()];
  }

  private allowed(): Set<string> {
    const base = this.publicBaseUrl();
    if (base === this.cachedBase) return this.cachedAllowed;
    const set = new Set(this.extra.map((o) => o.toLowerCase()));
    const u = new URL(base);
    set.add(u.origin.toLowerCase());
    if (LOOPBACK_HOSTS.includes(u.hostname)) {
      for (const host of LOOPBACK_HOSTS) set.add(`${u.protocol}//${host}${u.port ? `:${u.port}` : ''}`);
    }
    this.cachedBase = base;
    this.cachedAllowed = set;
    return set;
  }
}

/** Request headers that carry a credential: a bearer token, or a sign-in-with-x proof (which signs in like one). */
const CREDENTIAL_HEADERS = ['authorization', 'sign-in-with-x'] as const;

/**
 * Whether a request acts with a credential: it carries `Authorization` or `SIGN-IN-WITH-X`, or (a
 * CORS preflight) announces either in `Access-Control-Request-Headers`.
 */
export function carriesCredentials(req: IncomingMessage): boolean {
  if (CREDENTIAL_HEADERS.some((h) => req.headers[h] !== undefined)) return true;
  const announced = req.headers['access-control-request-headers'];
  return (
    typeof announced === 'string' &&
    announced
      .toLowerCase()
      .split(',')
      .some((h) => (CREDENTIAL_HEADERS as readonly string[]).includes(h.trim()))
  );
}

/**
 * The body of the 403 refusing a foreign `Origin` on `/mcp`: a JSON-RPC error (`-32000`, id null),
 * the answer the MCP SDK's own DNS-rebinding check gives, so MCP clients read it as one.
 */
export function mcpOriginRefusal(origin: string): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: `Invalid Origin header: ${origin.slice(0, 200)}` }, id: null });
}
