import type { IncomingMessage } from 'node:http';
import type { Services } from '../services.js';
import type { SafeHtml } from './html.js';

/** What a page handler gets: the services, the path parameters of its template and the query string. */
export interface PageContext {
  services: Services;
  /** Path parameters by template name (`/capabilities/{capability_id}` → `capability_id`), decoded. */
  params: Record<string, string>;
  query: URLSearchParams;
  req: IncomingMessage;
}

/** A rendered page: the whole document and its HTTP status (default 200). */
export interface PageResult {
  status?: number;
  html: SafeHtml;
  /** Default `no-cache` (revalidate each time: pages show live state). */
  cacheControl?: string;
}

/** One HTML page: its path template and what renders it. */
export interface WebPage {
  template: string;
  render(ctx: PageContext): Promise<PageResult>;
}
