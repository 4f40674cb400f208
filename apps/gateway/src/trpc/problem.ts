import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/unstable-core-do-not-import';
import { isRedisUnavailable } from '@acg/redis';
import { namedLimitOf, problemDetails, ProblemError, statusTitle, type Problem } from '@acg/schemas';

export { problemDetails, ProblemError, statusTitle, type Problem };
import { ZodError } from 'zod';

const CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  501: 'NOT_IMPLEMENTED',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};

const STATUS_BY_CODE: Record<string, number> = Object.fromEntries(Object.entries(CODE_BY_STATUS).map(([s, c]) => [c, Number(s)]));
STATUS_BY_CODE.PARSE_ERROR = 400;
STATUS_BY_CODE.TIMEOUT = 408;
STATUS_BY_CODE.PRECONDITION_FAILED = 412;
STATUS_BY_CODE.CLIENT_CLOSED_REQUEST = 499;

/** Seconds a caller is told to wait (`Retry-After`) when Redis is briefly unavailable. */
export const REDIS_RETRY_AFTER_SECONDS = 5;

/** The stable machine code (`reason` and `code`) of a 503 for a store outage (docs/operating.md "Redis outage tolerance"). */
export const SERVICE_UNAVAILABLE = 'service_unavailable';

/**
 * The 503 problem for an error caused by Redis being unavailable (`isRedisUnavailable`), with
 * `Retry-After`, or undefined for any other error. The detail is fixed: no Redis text leaks.
 */
export function redisUnavailableProblem(err: unknown): { status: 503; body: Problem; headers: Record<string, string> } | undefined {
  if (!isRedisUnavailable(err)) return undefined;
  return {
    status: 503,
    body: {
      type: 'about:blank',
      title: statusTitle(503),
      status: 503,
      detail: `The service is briefly unavailable; retry after ${REDIS_RETRY_AFTER_SECONDS} s.`,
      reason: SERVICE_UNAVAILABLE,
      code: SERVICE_UNAVAILABLE,
    },
    headers: { 'Retry-After': String(REDIS_RETRY_AFTER_SECONDS) },
  };
}

/**
 * A TRPCError whose REST body is the given RFC 9457 problem (docs/decisions.md "Errors").
 * `type` defaults to `about:blank`; `extensions` become extension members (e.g. `execution_id`).
 */
export function problem(status: number, detail: string, extensions: Record<string, unknown> = {}, headers: Record<string, string> = {}): TRPCError {
  return new TRPCError({
    code: CODE_BY_STATUS[status] ?? 'INTERNAL_SERVER_ERROR',
    message: detail,
    cause: new ProblemError(status, detail, extensions, headers),
  });
}

/** A TRPCError carrying a finished body as-is (stored problems, the 402 challenge). */
export function rawError(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): TRPCError {
  return trpcErrorOf(ProblemError.answer(status, body, headers));
}

/** The TRPCError carrying `e` to the error formatter, which answers its status, headers and body (the REST edge's one mapping). */
export function trpcErrorOf(e: ProblemError): TRPCError {
  return new TRPCError({ code: CODE_BY_STATUS[e.status] ?? 'INTERNAL_SERVER_ERROR', message: e.message, cause: e });
}

/** zod issues as problem `errors` (path and message of each). */
export function zodIssues(err: ZodError): Problem['errors'] {
  return err.issues.map((i) => ({ path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)), message: i.message, code: i.code }));
}

type ZodIssue = ZodError['issues'][number];

/** The first zod `too_big` issue of a named limit (@acg/schemas limits.ts), also inside a union's branches; its path is from the root. */
function namedLimitIssue(issues: readonly ZodIssue[], base: PropertyKey[] = []): Extract<ZodIssue, { code: 'too_big' }> | undefined {
  for (const i of issues) {
    if (i.code === 'too_big' && namedLimitOf(i.message)) return { ...i, path: [...base, ...i.path] };
    if (i.code === 'invalid_union') {
      for (const branch of i.errors) {
        const found = namedLimitIssue(branch, [...base, ...i.path]);
        if (found) return found;
      }
    }
  }
  return undefined;
}

/**
 * The problem body and headers for any error thrown inside tRPC. Client errors keep their
 * message; server errors get a fixed sentence, so no stack, key, calldata or upstream text leaks.
 * Redis unavailable (a connection error, see `isRedisUnavailable`) is 503 with `Retry-After`.
 */
export function problemOf(error: TRPCError): Answered {
  // mapped once per error: the error formatter (body) and responseMeta (status, headers) both ask
  let answered = mapped.get(error);
  if (!answered) {
    answered = mapProblem(error);
    mapped.set(error, answered);
  }
  return answered;
}

/** A problem answer: status, body and headers. */
type Answered = { status: number; body: Record<string, unknown>; headers: Record<string, string> };

const mapped = new WeakMap<TRPCError, Answered>();

function mapProblem(error: TRPCError): Answered {
  const cause = error.cause;
  if (cause instanceof ProblemError) return { status: cause.status, body: cause.body, headers: cause.headers };
  const unavailable = redisUnavailableProblem(cause);
  if (unavailable) return unavailable;
  const status = STATUS_BY_CODE[error.code] ?? 500;
  if (cause instanceof ZodError || (cause as { name?: string } | undefined)?.name === 'ZodError') {
    // a count or length over a named limit (@acg/schemas limits.ts) is 422 naming it, not a malformed request
    const over = namedLimitIssue((cause as ZodError).issues);
    if (over) {
      const field = over.path.map(String).join('.');
      return {
        status: 422,
        body: {
          type: 'about:blank',
          title: statusTitle(422),
          status: 422,
          detail: `${field} is over its limit: ${over.message}.`,
          limit: namedLimitOf(over.message),
          max: Number(over.maximum),
          errors: zodIssues(cause as ZodError),
        },
        headers: {},
      };
    }
    return {
      status: 400,
      body: {
        type: 'about:blank',
        title: statusTitle(400),
        status: 400,
        detail: 'The request does not match the schema.',
        errors: zodIssues(cause as ZodError),
      },
      headers: {},
    };
  }
  const detail =
    status >= 500
      ? 'An internal error occurred; it was logged. Retry later.'
      : error.code === 'PARSE_ERROR'
        ? 'The request body is not valid JSON.'
        : error.message;
  return { status, body: { type: 'about:blank', title: statusTitle(status), status, detail }, headers: {} };
}
