import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { WebhookPolicy } from './config.js';
import { isAllowedAddress, lookupForPolicy } from './webhookUrl.js';
import { isIP } from 'node:net';

/** Outcome of one webhook POST: the HTTP status (0 when no response) and a short reason when not 2xx. */
export interface PostResult {
  status: number;
  ok: boolean;
  /** `http_<status>`, `timeout`, `connection_refused`, `non_public_address`, `network_error` */
  reason?: string;
}

/**
 * POSTs webhook bodies with keep-alive connections (one agent per scheme). Redirects are not
 * followed (a 3xx is a failed attempt). Every connection goes through a lookup that refuses the
 * addresses the policy refuses (production: all but public unicast; development: loopback is
 * allowed too), and IP-literal hosts are checked directly, so a webhook host that later resolves
 * to a private address is never reached (DESIGN: SSRF; `checkPublicUrl`).
 */
export class WebhookPoster {
  private readonly http: HttpAgent;
  private readonly https: HttpsAgent;
  constructor(
    private readonly policy: WebhookPolicy,
    private readonly timeoutMs = 10_000,
    maxSockets = 256,
  ) {
    const lookup = lookupForPolicy(policy);
    this.http = new HttpAgent({ keepAlive: true, maxSockets, lookup });
    this.https = new HttpsAgent({ keepAlive: true, maxSockets, lookup });
  }

  /** POSTs `body` (JSON text) to `url` with `headers`; never throws. */
  post(url: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return Promise.resolve({ status: 0, ok: false, reason: 'invalid_url' });
    }
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if ((this.policy === 'production' && u.protocol !== 'https:') || (isIP(host) && !isAllowedAddress(host, this.policy))) {
      return Promise.resolve({ status: 0, ok: false, reason: 'non_public_address' });
    }
    const isHttps = u.protocol === 'https:';
    return new Promise((resolve) => {
      let settled = false;
      const done = (r: PostResult) => {
        if (!settled) {
          settled = true;
          resolve(r);
        }
      };
      const req = (isHttps ? httpsRequest : httpRequest)(
        u,
        {
          method: 'POST',
          agent: isHttps ? this.https : this.http,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'acg-wallet-monitor/0.1', ...headers },
          timeout: this.timeoutMs,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          res.resume(); // the answer's body is not used; drain it so the connection is reused
          res.on('end', () => done(status >= 200 && status < 300 ? { status, ok: true } : { status, ok: false, reason: `http_${status}` }));
          res.on('error', () => done({ status, ok: false, reason: 'network_error' }));
        },
      );
      req.on('timeout', () => {
        req.destroy();
        done({ status: 0, ok: false, reason: 'timeout' });
      });
      req.on('error', (e: NodeJS.ErrnoException) =>
        done({ status: 0, ok: false, reason: e.code === 'ECONNREFUSED' ? 'connection_refused' : e.code === 'ENONPUBLIC' ? 'non_public_address' : 'network_error' }),
      );
      req.end(body);
    });
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}
