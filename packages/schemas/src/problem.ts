import { z } from 'zod';

/** Media type of problem details responses (RFC 9457, docs/decisions.md "Errors"). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * One validation issue inside a problem (docs/decisions.md "Errors": "each zod issue with its path"):
 * `path` (property names and array indexes from the body root), `message`, optional zod `code`.
 */
export const ProblemIssue = z.object({
  path: z.array(z.union([z.string(), z.int()])),
  message: z.string(),
  code: z.string().optional(),
});
export type ProblemIssue = z.infer<typeof ProblemIssue>;

/**
 * RFC 9457 problem details, the body of every REST error except 402 (docs/decisions.md "Errors"):
 * `type` (URI reference, `about:blank` when no specific type), `title`, `status` (HTTP status code),
 * `detail` (human-readable, never an upstream error verbatim), optional `instance` (URI reference
 * of this occurrence) and `errors` (validation issues). Extension members are allowed (RFC 9457 3.2).
 */
export const ProblemDetails = z.looseObject({
  type: z.string().min(1),
  title: z.string().min(1),
  status: z.int().min(100).max(599),
  detail: z.string(),
  instance: z.string().optional(),
  errors: z.array(ProblemIssue).optional(),
});
export type ProblemDetails = z.infer<typeof ProblemDetails>;

/**
 * A failure that answers as a problem: a stable snake_case `code`, a `message` safe to show
 * (`shortMessage` = `message`; never upstream text, URLs or keys), the HTTP `status` to answer and
 * the underlying `cause` (logged, never shown). The base of `CapabilityFailure` (@acg/capabilities,
 * status 502 by default) and `ProviderRunError` (@acg/provider-kit, 422 by default).
 */
export class CodedFailure extends Error {
  readonly shortMessage: string;
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.shortMessage = message;
  }
}

/** Titles of the HTTP statuses the gateway answers (RFC 9110), `title` of a problem. */
const STATUS_TITLES: Record<number, string> = {
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

/** Title of an HTTP status (`Error` for one not listed). */
export function statusTitle(status: number): string {
  return STATUS_TITLES[status] ?? 'Error';
}

/**
 * An RFC 9457 problem body (docs/decisions.md "Errors"): `type, title, status, detail`, optional
 * `instance`, `errors` and extension members (e.g. `reason`, `execution_id`, `payment`).
 */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: { path: (string | number)[]; message: string; code?: string }[];
  [extension: string]: unknown;
}

/** The problem body of `status` with `detail` and extension members; `type` defaults to `about:blank`. */
export function problemDetails(status: number, detail: string, extensions: Record<string, unknown> = {}): Problem {
  return { ...extensions, type: String(extensions.type ?? 'about:blank'), title: statusTitle(status), status, detail };
}

/**
 * The one error type from the domain to the edge (docs/architecture.md "Errors"): a failure that
 * answers as an RFC 9457 problem, created where the failure is known (a paywall conflict, a chain
 * outage, a capability that cannot run, a refused quote) and mapped once by each edge: REST answers
 * `status`, `headers` and `body` as problem+json; MCP a tool error (or a JSON-RPC error for a task);
 * the builder a JSON-RPC error. `body` is the problem (or, for the x402 challenge, the 402 body as
 * x402 writes it), `headers` the answer's headers (e.g. `Retry-After`, `PAYMENT-REQUIRED`).
 * Subclasses (the paywall's typed errors) add extension members and headers through
 * {@link ProblemError.members} and {@link ProblemError.answerHeaders}.
 */
export class ProblemError extends Error {
  override name = 'ProblemError';
  constructor(
    /** HTTP status of the answer. */
    readonly status: number,
    detail: string,
    private readonly extensions: Record<string, unknown> = {},
    private readonly extraHeaders: Record<string, string> = {},
    /** A finished body answered as it is (a stored answer, the 402 challenge); default: {@link problemDetails}. */
    private readonly finished?: Record<string, unknown>,
  ) {
    super(detail);
  }

  /** A ProblemError answering a finished `body` as it is (its `detail` is the message). */
  static answer(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): ProblemError {
    return new ProblemError(status, String(body.detail ?? body.error ?? statusTitle(status)), {}, headers, body);
  }

  /** Extension members of the body (subclasses add theirs). */
  protected members(): Record<string, unknown> {
    return this.extensions;
  }

  /** Headers of the answer (subclasses add theirs, e.g. `Retry-After`). */
  protected answerHeaders(): Record<string, string> {
    return this.extraHeaders;
  }

  /** The answer's body: the finished body, or the RFC 9457 problem of status, message and members. */
  get body(): Record<string, unknown> {
    return this.finished ?? problemDetails(this.status, this.message, this.members());
  }

  /** The answer's headers. */
  get headers(): Record<string, string> {
    return this.answerHeaders();
  }
}
