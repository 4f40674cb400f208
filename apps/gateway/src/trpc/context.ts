import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Services } from '../services.js';

/** Raw request bodies, kept aside for signature checks (docs/pitfalls.md: never a Buffer in req.body). */
export const rawBodies = new WeakMap<IncomingMessage, Buffer>();

/**
 * The tRPC context of one request: the node request/response, the services, and what the
 * procedure wants in the response (status and headers, applied by `responseMeta`).
 */
export interface Context {
  req: IncomingMessage;
  res: ServerResponse;
  services: Services;
  /** `rest` for the trpc-to-openapi bridge, `trpc` for the native /trpc endpoint. */
  transport: 'rest' | 'trpc';
  /**
   * Status for a successful response (default 200). An object, not a field, because tRPC
   * middlewares hand the resolver a copy of the context: mutations must go through a shared reference.
   */
  response: { status?: number };
  /** Extra headers for the response. */
  responseHeaders: Record<string, string>;
}

/** Case-insensitive request header, first value. */
export function header(ctx: Pick<Context, 'req'>, name: string): string | undefined {
  const v = ctx.req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}
