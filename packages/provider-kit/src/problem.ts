import { STATUS_CODES, type ServerResponse } from 'node:http';

/** Media type of RFC 9457 problem details (what the gateway answers too). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** One validation issue inside a problem (schema `ProblemIssue`): `path` from the body root. */
export interface ProblemIssue {
  path: (string | number)[];
  message: string;
  code?: string;
}

/** An RFC 9457 problem as the kit answers it: `type` `about:blank`, `title` the status text, `detail`, optional `code` and `errors`. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code?: string;
  errors?: ProblemIssue[];
}

/** Builds a {@link Problem}; `title` is the HTTP status text (e.g. `Unauthorized`). */
export function problem(status: number, detail: string, extra: { code?: string; errors?: ProblemIssue[] } = {}): Problem {
  return { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail, ...extra };
}

/** Writes a JSON answer (`no-store`), unless the response has already been sent. */
export function sendJson(res: ServerResponse, status: number, body: unknown, contentType = 'application/json', headers: Record<string, string> = {}): void {
  if (res.headersSent || res.writableEnded) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** Writes a {@link Problem} as `application/problem+json`. */
export function sendProblem(res: ServerResponse, p: Problem, headers: Record<string, string> = {}): void {
  sendJson(res, p.status, p, PROBLEM_CONTENT_TYPE, headers);
}
