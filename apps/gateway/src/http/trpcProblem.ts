import type { ServerResponse } from 'node:http';
import { statusTitle } from '../trpc/problem.js';

type TrpcErrorShape = { message?: unknown; code?: unknown; data?: { httpStatus?: unknown } & Record<string, unknown> } & Record<string, unknown>;

/**
 * One `{error: shape}` envelope of tRPC's HTTP protocol as an RFC 9457 problem object that still
 * carries `error` (message, code, data), so @trpc/client reads it as before and every other
 * reader sees a problem (docs/decisions.md "Errors").
 */
export function trpcEnvelopeToProblem(envelope: unknown): unknown {
  if (!envelope || typeof envelope !== 'object' || !('error' in envelope)) return envelope;
  const { message, code, data, ...problem } = (envelope as { error: TrpcErrorShape }).error ?? {};
  const status = Number(problem.status ?? data?.httpStatus ?? 500);
  return {
    ...problem,
    type: problem.type ?? 'about:blank',
    title: problem.title ?? statusTitle(status),
    status,
    detail: problem.detail ?? (status >= 500 ? 'An internal error occurred; it was logged. Retry later.' : String(message ?? statusTitle(status))),
    error: { message, code, data },
  };
}

/**
 * Makes the native /trpc endpoint answer errors as problem objects: buffers a response whose
 * status is 4xx/5xx and rewrites its JSON body (one envelope, or each element of a batch) when it ends.
 * Successful responses stream through untouched.
 */
export function problemBodyForTrpc(res: ServerResponse): void {
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  const chunks: Buffer[] = [];
  const buffering = () => res.statusCode >= 400 && !res.headersSent;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (!buffering()) return write(chunk, ...rest);
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string | Uint8Array));
    return true;
  }) as ServerResponse['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (!buffering()) return end(chunk, ...rest);
    if (chunk !== undefined && typeof chunk !== 'function') chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string | Uint8Array));
    let text = Buffer.concat(chunks).toString('utf8');
    try {
      const parsed: unknown = JSON.parse(text);
      text = JSON.stringify(Array.isArray(parsed) ? parsed.map(trpcEnvelopeToProblem) : trpcEnvelopeToProblem(parsed));
      if (!Array.isArray(parsed)) res.setHeader('Content-Type', 'application/problem+json');
    } catch {
      // not JSON: leave the body as tRPC wrote it
    }
    res.removeHeader('Content-Length');
    return end(text);
  }) as ServerResponse['end'];
}
