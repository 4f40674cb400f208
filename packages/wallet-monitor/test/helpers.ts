import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalAccount } from 'viem';

/** One webhook request as the receiver saw it. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** the status the receiver answered */
  status: number;
  at: number;
}

/**
 * A local webhook receiver: records every request; answers 200 unless the path's mode says
 * otherwise (`fail` → 503, `drop` → destroys the connection, `hold` → answers 200 only when
 * {@link release}d; such a request is recorded when it is answered).
 */
export class Receiver {
  readonly requests: Received[] = [];
  readonly modes = new Map<string, 'ok' | 'fail' | 'drop' | 'hold'>();
  /** Requests held open (mode `hold`), by path. */
  readonly held = new Map<string, (() => void)[]>();
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const mode = this.modes.get(path) ?? 'ok';
        if (mode === 'drop') {
          this.requests.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status: 0, at: Date.now() });
          req.socket.destroy();
          return;
        }
        if (mode === 'hold') {
          const answer = () => {
            this.requests.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status: 200, at: Date.now() });
            res.end('ok');
          };
          this.held.set(path, [...(this.held.get(path) ?? []), answer]);
          return;
        }
        const status = mode === 'fail' ? 503 : 200;
        this.requests.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status, at: Date.now() });
        res.statusCode = status;
        res.end(status === 200 ? 'ok' : 'unavailable');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Answers 200 to the requests held open on `path` and stops holding new ones. */
  release(path: string): void {
    this.modes.set(path, 'ok');
    for (const answer of this.held.get(path) ?? []) answer();
    this.held.delete(path);
  }

  /** Requests to `path` answered 2xx. */
  delivered(path: string): Received[] {
    return this.requests.filter((r) => r.path === path && r.status === 200);
  }

  /** Every request to `path`. */
  attempts(path: string): Received[] {
    return this.requests.filter((r) => r.path === path);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/**
 * Polls `check` until it returns a truthy value (returned) or `timeoutMs` passes (throws with
 * `what`). A bound on waiting, not a speed assertion.
 */
export async function waitFor<T>(what: string, check: () => Promise<T> | T, timeoutMs = 30_000, everyMs = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** JSON request helper: status, headers and parsed body. */
export async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as any };
}

/** Sign-In with Ethereum against the gateway: nonce → personal_sign → bearer token. */
export async function signIn(baseUrl: string, account: LocalAccount): Promise<string> {
  const nonce = await call('POST', `${baseUrl}/v1/auth/nonce`, { address: account.address });
  if (nonce.status !== 200) throw new Error(`nonce: ${nonce.status}`);
  const signature = await account.signMessage({ message: nonce.body.message });
  const token = await call('POST', `${baseUrl}/v1/auth/token`, { message: nonce.body.message, signature });
  if (token.status !== 200) throw new Error(`token: ${token.status}`);
  return token.body.access_token as string;
}
