import { isIP } from 'node:net';
import { parseStrictJson, type ProviderCallRequest } from '@acg/schemas';
import { isAllowedAddress, lookupForPolicy, type UrlPolicy } from '@acg/net-guard';
import { httpFailureReason } from '@acg/wallet-monitor';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';

/** Largest provider answer read: 1 MiB (a larger body fails the call as `response_too_large`). */
export const MAX_PROVIDER_RESPONSE_BYTES = 1 << 20;

/** What one call to a provider endpoint gave: the parsed JSON body of a 2xx, or why not. */
export type ProviderCallOutcome =
  | { ok: true; status: number; body: unknown /** the answer's bytes (probes hash them) */; raw: Buffer; ms: number }
  | {
      ok: false;
      /** HTTP status, 0 when there was no response */
      status: number;
      /** `http_<status>`, `timeout`, `connection_refused`, `non_public_address`, `network_error` (see `httpFailureReason`), `invalid_url`, `not_json` (also a JSON number that does not round-trip, e.g. `1e400`: `parseStrictJson` of @acg/schemas), `response_too_large` */
      reason: string;
      ms: number;
    };

/** Options of one call: its timeout (ms) and its `webhook-id`. A probe is sent exactly as a paid call (docs/trust-v1.md "Probes"). */
export interface ProviderCallOptions {
  timeoutMs: number;
  /** `webhook-id`: the execution id (`exe_<ULID>`, a probe's too) */
  messageId: string;
}

/**
 * Calls provider endpoints (docs/decisions.md "Providers", routing): `POST {endpoint}` with the JSON body
 * `{capability_id, execution_id, input}` and Standard Webhooks headers (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`, signed with the provider's `whsec_` secret by the
 * `standardwebhooks` library). One undici `Agent` keeps keep-alive connections per provider
 * origin; every new connection goes through the SSRF lookup of `policy` (production: public
 * unicast only; development: loopback too), and IP-literal hosts are checked directly, so an
 * endpoint that later resolves to a private address is never reached. Redirects are not followed.
 * Never throws.
 */
export class ProviderClient {
  private readonly agent: Agent;
  private readonly signers = new Map<string, Webhook>();

  constructor(private readonly policy: UrlPolicy) {
    this.agent = new Agent({
      connections: 32,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      connect: { timeout: 10_000, lookup: lookupForPolicy(policy) },
    });
  }

  private refused(endpoint: string): string | undefined {
    let u: URL;
    try {
      u = new URL(endpoint);
    } catch {
      return 'invalid_url';
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'invalid_url';
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if ((this.policy === 'production' && u.protocol !== 'https:') || (isIP(host) && !isAllowedAddress(host, this.policy))) return 'non_public_address';
    return undefined;
  }

  private signer(secret: string): Webhook {
    let w = this.signers.get(secret);
    if (!w) {
      if (this.signers.size > 10_000) this.signers.clear();
      w = new Webhook(secret);
      this.signers.set(secret, w);
    }
    return w;
  }

  /** The Standard Webhooks headers of `body` sent now (exported for tests and probes). */
  signedHeaders(secret: string, messageId: string, body: string, at = new Date()): Record<string, string> {
    return {
      'webhook-id': messageId,
      'webhook-timestamp': Math.floor(at.getTime() / 1000).toString(),
      'webhook-signature': this.signer(secret).sign(messageId, at, body),
    };
  }

  /** Sends one signed call; a 2xx with a JSON body is `ok`, anything else is a failure with its reason. */
  async call(endpoint: string, secret: string, payload: ProviderCallRequest, opts: ProviderCallOptions): Promise<ProviderCallOutcome> {
    const started = performance.now();
    const ms = () => performance.now() - started;
    const refused = this.refused(endpoint);
    if (refused) return { ok: false, status: 0, reason: refused, ms: ms() };
    const body = JSON.stringify(payload);
    try {
      const res = await request(endpoint, {
        method: 'POST',
        dispatcher: this.agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'user-agent': 'acg-gateway/0.1',
          ...this.signedHeaders(secret, opts.messageId, body),
        },
        body,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_PROVIDER_RESPONSE_BYTES) {
          res.body.destroy();
          return { ok: false, status: res.statusCode, reason: 'response_too_large', ms: ms() };
        }
        chunks.push(chunk as Buffer);
      }
      if (res.statusCode < 200 || res.statusCode >= 300) return { ok: false, status: res.statusCode, reason: `http_${res.statusCode}`, ms: ms() };
      const raw = Buffer.concat(chunks);
      try {
        return { ok: true, status: res.statusCode, body: parseStrictJson(raw.toString('utf8')), raw, ms: ms() };
      } catch {
        return { ok: false, status: res.statusCode, reason: 'not_json', ms: ms() };
      }
    } catch (e) {
      return { ok: false, status: 0, reason: httpFailureReason(e), ms: ms() };
    }
  }

  /**
   * Whether `GET {endpoint}` gets any HTTP answer within `timeoutMs` (onboarding's reachability
   * check: the provider kit answers 200; any status counts). Returns the reason when not.
   */
  async reachable(endpoint: string, timeoutMs = 5_000): Promise<{ ok: true } | { ok: false; reason: string }> {
    const refused = this.refused(endpoint);
    if (refused) return { ok: false, reason: refused };
    try {
      const res = await request(endpoint, {
        method: 'GET',
        dispatcher: this.agent,
        headers: { 'user-agent': 'acg-gateway/0.1' },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.body.dump();
      return { ok: true };
    } catch (e) {
      return { ok: false, reason: httpFailureReason(e) };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
