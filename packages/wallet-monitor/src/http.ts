import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import { isAllowedAddress, lookupForPolicy, type UrlPolicy } from '@acg/net-guard';

/** Outcome of one webhook POST: the HTTP status (0 when no response) and a short reason when not 2xx. */
export interface PostResult {
  status: number;
  ok: boolean;
  /** `http_<status>`, `timeout`, `connection_refused`, `non_public_address`, `network_error`, `invalid_url` */
  reason?: string;
}

/**
 * POSTs webhook bodies through one undici `Agent`, which keeps a pool of keep-alive connections
 * per webhook origin (scheme + host + port; at most `connectionsPerHost` each), so consecutive
 * deliveries to one receiver reuse warm connections. Redirects are not followed (a 3xx is a
 * failed attempt). Every new connection goes through a lookup that refuses the addresses the
 * policy refuses (production: all but public unicast; development: loopback is allowed too), and
 * IP-literal hosts are checked directly, so a webhook host that later resolves to a private
 * address is never reached (docs/decisions.md: SSRF; `checkPublicUrl`).
 */
export class WebhookPoster {
  private readonly agent: Agent;
  constructor(
    private readonly policy: UrlPolicy,
    private readonly timeoutMs = 10_000,
    connectionsPerHost = 64,
  ) {
    this.agent = new Agent({
      connections: connectionsPerHost,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connect: { timeout: timeoutMs, lookup: lookupForPolicy(policy) },
    });
  }

  /** POSTs `body` (JSON text) to `url` with `headers`; never throws. */
  async post(url: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return { status: 0, ok: false, reason: 'invalid_url' };
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return { status: 0, ok: false, reason: 'invalid_url' };
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if ((this.policy === 'production' && u.protocol !== 'https:') || (isIP(host) && !isAllowedAddress(host, this.policy))) {
      return { status: 0, ok: false, reason: 'non_public_address' };
    }
    try {
      const res = await request(u, {
        method: 'POST',
        dispatcher: this.agent,
        headers: { 'content-type': 'application/json', 'user-agent': 'acg-wallet-monitor/0.1', ...headers },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const status = res.statusCode;
      await res.body.dump(); // the answer's body is not used; drain it so the connection is reused
      return status >= 200 && status < 300 ? { status, ok: true } : { status, ok: false, reason: `http_${status}` };
    } catch (e) {
      return { status: 0, ok: false, reason: httpFailureReason(e) };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/**
 * The short reason of a failed outbound HTTP request (undici): `timeout` (connect, headers, body
 * or abort), `connection_refused`, `non_public_address` (refused by the SSRF lookup), else
 * `network_error`. Shared by webhook deliveries and provider calls.
 */
export function httpFailureReason(e: unknown): string {
  const err = e as { name?: string; code?: string; cause?: { code?: string } };
  const code = err.code ?? err.cause?.code;
  if (
    err.name === 'TimeoutError' ||
    err.name === 'AbortError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  )
    return 'timeout';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ENONPUBLIC') return 'non_public_address';
  return 'network_error';
}
