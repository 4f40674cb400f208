import { request } from 'node:http';

/** What one raw HTTP exchange gave: an answer, or how the connection failed. */
export type RawResult =
  | { kind: 'answer'; status: number; headers: Record<string, string | string[] | undefined>; text: string }
  | { kind: 'dropped'; error: string }
  | { kind: 'hang' };

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Sent as is; with `chunked`, in pieces without Content-Length. */
  body?: string | Buffer;
  chunked?: boolean;
  /** Hang-detection bound, ms: past it the exchange counts as a hang (not a speed check). */
  timeoutMs?: number;
}

/**
 * One HTTP exchange with node:http, so tests can send any method, any header and any body
 * (fetch refuses TRACE/CONNECT and sets its own headers). Never rejects: a reset or a hang is a result.
 */
export function rawRequest(baseUrl: string, r: RawRequest): Promise<RawResult> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    let settled = false;
    const done = (v: RawResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(v);
    };
    const headers: Record<string, string> = { ...(r.headers ?? {}) };
    if (r.body !== undefined && !r.chunked) headers['content-length'] = String(Buffer.byteLength(r.body));
    const req = request({ host: url.hostname, port: url.port, method: r.method, path: r.path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ kind: 'answer', status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (e) => done({ kind: 'dropped', error: e.message }));
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ kind: 'hang' });
    }, r.timeoutMs ?? 15_000);
    req.on('error', (e) => done({ kind: 'dropped', error: e.message }));
    // CONNECT answers arrive as 'connect', not 'response'
    req.on('connect', (res, socket) => {
      socket.destroy();
      done({ kind: 'answer', status: res.statusCode ?? 0, headers: res.headers, text: '' });
    });
    if (r.body !== undefined) {
      if (r.chunked) {
        const buf = Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body);
        const piece = 64 * 1024;
        // write in pieces, ignoring errors: the server may answer and close before the end
        for (let i = 0; i < buf.length; i += piece) req.write(buf.subarray(i, i + piece), () => undefined);
      } else req.write(r.body);
    }
    req.end();
  });
}

/** True when `text` is an RFC 9457 problem object whose `status` is `status`. */
export function isProblem(text: string, status: number): boolean {
  try {
    const b = JSON.parse(text) as Record<string, unknown>;
    return typeof b.type === 'string' && typeof b.title === 'string' && b.status === status && typeof b.detail === 'string';
  } catch {
    return false;
  }
}
