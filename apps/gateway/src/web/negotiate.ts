import type { IncomingMessage } from 'node:http';
import Negotiator from 'negotiator';

/**
 * Whether the client prefers an HTML page to JSON (`Accept`, RFC 9110 12.5.1, read with
 * `negotiator`): a browser's `text/html,...,*\/*;q=0.8` does; no `Accept`, `*\/*` (curl),
 * `application/json` and every API client do not, so they keep their JSON answers.
 */
export function prefersHtml(req: IncomingMessage): boolean {
  if (!req.headers.accept) return false;
  return new Negotiator(req).mediaType(['application/json', 'text/html']) === 'text/html';
}
