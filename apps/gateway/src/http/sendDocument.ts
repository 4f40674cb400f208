import type { ServerResponse } from 'node:http';

/**
 * Answers 200 with `body` as `type` and `Cache-Control: cacheControl`; with `etag`, sets `ETag`
 * and answers 304 (no body) to a matching `If-None-Match`. Shared by the discovery documents and
 * the web pages' files.
 */
export function sendDocument(res: ServerResponse, type: string, body: string | Buffer, cacheControl: string, etag?: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', type);
  res.setHeader('Cache-Control', cacheControl);
  if (etag) {
    res.setHeader('ETag', etag);
    const inm = res.req.headers['if-none-match'];
    if (inm?.split(',').some((t) => t.trim() === etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
  }
  res.end(body);
}
