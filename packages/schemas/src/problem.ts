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
