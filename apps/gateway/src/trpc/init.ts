import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Context } from './context.js';
import { problemOf } from './problem.js';

/**
 * The tRPC instance. Errors are formatted as RFC 9457 problem details (docs/decisions.md "Errors"): on the
 * REST bridge the body is the problem itself; on native /trpc it also keeps tRPC's `message`,
 * `code` and `data.code` so @trpc/client understands it.
 */
export const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta>()
  .create({
    // No server stack trace in any answer. tRPC's default (isDev unless NODE_ENV=production) puts
    // `data.stack` in every /trpc error, and formats the stack (with source maps under tsx) for
    // every error shape, a 402 challenge included, even where it is dropped.
    isDev: false,
    errorFormatter({ shape, error, ctx }): Record<string, unknown> {
      const { body } = problemOf(error);
      // The REST bridge sends the problem as it is, with `message` set to the problem's own
      // sentence (else the bridge takes it from the raw error, which may carry upstream text such
      // as a Redis error). Everything else, including errors raised before a context exists (an
      // unsupported method on /trpc), keeps tRPC's shape: its node adapter reads
      // `data.httpStatus` from it, and a shape without it crashed the process.
      if (ctx?.transport === 'rest') return body.detail === undefined ? body : { ...body, message: String(body.detail) };
      return { ...body, message: String(body.detail ?? shape.message), code: shape.code, data: { ...shape.data, httpStatus: Number(body.status) } };
    },
  });

export const router = t.router;
