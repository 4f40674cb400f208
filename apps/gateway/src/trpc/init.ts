import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Context } from './context.js';
import { problemOf } from './problem.js';

/**
 * The tRPC instance. Errors are formatted as RFC 9457 problem details (DESIGN "Errors"): on the
 * REST bridge the body is the problem itself; on native /trpc it also keeps tRPC's `message`,
 * `code` and `data.code` so @trpc/client understands it.
 */
export const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta>()
  .create({
    errorFormatter({ shape, error, ctx }) {
      const { body } = problemOf(error);
      if (ctx?.transport === 'trpc') {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        return { ...body, message: String(body.detail ?? shape.message), code: shape.code, data: { code: shape.data.code, httpStatus: body.status } } as any;
      }
      // the REST bridge adds `message` from the shape, else from the raw error (which may carry
      // upstream text, e.g. a Redis error): give it the problem's own sentence
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      return (body.detail === undefined ? body : { ...body, message: String(body.detail) }) as any;
    },
  });

export const router = t.router;
export const middleware = t.middleware;

/** No authentication: discovery, health, registry (SPEC 5). */
export const publicProcedure = t.procedure;
