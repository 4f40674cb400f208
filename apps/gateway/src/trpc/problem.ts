import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/unstable-core-do-not-import';
import { isRedisUnavailable } from '@acg/redis';
import { namedLimitOf } from '@acg/schemas';
import { ZodError } from 'zod';

/** An RFC 9457 problem body: `type, title, status, detail`, optional `instance`, `errors` and extension members. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: { path: (string | number)[]; message: string; code?: string }[];
  [extension: string]: unknown;
}

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

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

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

/** Carries a finished problem body through tRPC to the error formatter. */
export class ProblemCause extends Error {
  override name = 'ProblemCause';
  constructor(
    readonly body: Problem | Record<string, unknown>,
    readonly headers: Record<string, string> = {},
    /** HTTP status; defaults to the body's `status` member. */
    readonly status = Number((body as Problem).status ?? 500),
  ) {
    super(String((body as Problem).detail ?? (body as Problem).title ?? 'problem'));
  }
}

/** Title of an HTTP status. */
export function statusTitle(status: number): string {
  return TITLES[status] ?? 'Error';
}

/**
 * A TRPCError whose REST body is the given RFC 9457 problem (docs/decisions.md "Errors").
 * `type` defaults to `about:blank`; `extensions` become extension members (e.g. `execution_id`).
 */
export function problem(status: number, detail: string, extensions: Record<string, unknown> = {}, headers: Record<string, string> = {}): TRPCError {
  return new TRPCError({
    code: CODE_BY_STATUS[status] ?? 'INTERNAL_SERVER_ERROR',
    message: detail,
    cause: new ProblemCause(problemDetails(status, detail, extensions), headers),
  });
}

/** The RFC 9457 body of {@link problem}, for transports other than tRPC (e.g. an MCP tool's error text). */
export function problemDetails(status: number, detail: string, extensions: Record<string, unknown> = {}): Problem {
  return { ...extensions, type: String(extensions.type ?? 'about:blank'), title: statusTitle(status), status, detail };
}

/** A TRPCError carrying a finished body as-is (stored problems, the 402 challenge). */
export function rawError(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): TRPCError {
  return new TRPCError({
    code: CODE_BY_STATUS[status] ?? 'INTERNAL_SERVER_ERROR',
    message: String(body.detail ?? body.error ?? statusTitle(status)),
    cause: new ProblemCause(body, headers, status),
  });
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
export function problemOf(error: TRPCError): { status: number; body: Record<string, unknown>; headers: Record<string, string> } {
  const cause = error.cause;
  if (cause instanceof ProblemCause) return { status: cause.status, body: cause.body, headers: cause.headers };
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
