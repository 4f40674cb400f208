import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendDocument } from '../http/sendDocument.js';
import type { Services } from '../services.js';
import { asset } from './assets.js';
import { PAGE_HEADERS } from './layout.js';
import { prefersHtml } from './negotiate.js';
import { notFoundPage } from './pages/notFound.js';
import type { SafeHtml } from './html.js';
import type { WebPage } from './page.js';
import { WEB_PAGES } from './pages/index.js';

export type { PageContext, PageResult, WebPage } from './page.js';
import { robotsTxt } from './robots.js';

/** Files served to every client (GET and HEAD): the icons, robots.txt and the page assets. */
const FILE_ROUTES = ['/favicon.ico', '/favicon.svg', '/robots.txt', '/assets/{name}'] as const;

/** Every path template of the default site (the pages of {@link WEB_PAGES}, then the files), for route tables built without services (the fuzz suite). */
export const WEB_PATHS: readonly string[] = [...WEB_PAGES.map((p) => p.template), ...FILE_ROUTES];

/**
 * The web pages for people (docs/decisions.md "Web pages for people") and their files. Every path is in the
 * gateway's route table (GET, HEAD; other methods 405). A page answers only a client that prefers
 * HTML (`Accept`, {@link prefersHtml}); any other client gets the 404 problem+json it got before
 * pages existed, so API clients keep their JSON everywhere. The files (icons, robots.txt,
 * assets) are served before the rate limit, like the discovery documents; a page is rendered
 * per request (some read Redis), so pages count against the per-IP rate limit like API calls.
 */
export class WebSite {
  private readonly pages: Map<string, WebPage>;

  constructor(
    private readonly services: Services,
    pages: readonly WebPage[] = WEB_PAGES,
  ) {
    this.pages = new Map(pages.map((p) => [p.template, p]));
  }

  /** Whether `template` is a rendered page, a static file, or neither (another route). */
  kind(template: string): 'page' | 'file' | undefined {
    if (this.pages.has(template)) return 'page';
    return (FILE_ROUTES as readonly string[]).includes(template) ? 'file' : undefined;
  }

  /** Path templates for the route table: the pages, then the files. */
  paths(): string[] {
    return [...this.pages.keys(), ...FILE_ROUTES];
  }

  /**
   * Answers a GET or HEAD whose route-table template is one of {@link paths}; returns false for
   * any other template (the caller goes on). `sendProblem` writes the JSON clients' 404.
   */
  async serve(
    template: string,
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    search: string,
    sendProblem: (res: ServerResponse, status: number, detail: string) => void,
  ): Promise<boolean> {
    const page = this.pages.get(template);
    if (page) {
      res.setHeader('Vary', 'Accept');
      if (!prefersHtml(req)) {
        sendProblem(
          res,
          404,
          `No JSON resource at ${path.slice(0, 200)}: it is a web page (Accept: text/html). The documented paths are listed at /openapi.json.`,
        );
        return true;
      }
      const result = await page.render({ services: this.services, params: paramsOf(template, path), query: new URLSearchParams(search), req });
      sendHtml(res, result.status ?? 200, result.html, result.cacheControl ?? 'no-cache');
      return true;
    }
    switch (template) {
      case '/robots.txt':
        sendFile(res, 'text/plain; charset=utf-8', Buffer.from(robotsTxt(this.services.publicBaseUrl())), 'public, max-age=3600');
        return true;
      case '/favicon.ico':
      case '/favicon.svg':
      case '/assets/{name}': {
        const name = template === '/assets/{name}' ? (paramsOf(template, path).name ?? '') : template.slice(1);
        const a = asset(name);
        if (!a) {
          if (prefersHtml(req)) sendHtml(res, 404, notFoundPage(path), 'no-cache');
          else sendProblem(res, 404, `No asset named ${name.slice(0, 100)}.`);
          return true;
        }
        // a URL with the current content hash never changes; the plain name is revalidated
        const versioned = new URLSearchParams(search).get('v') === a.etag.slice(1, -1);
        sendFile(res, a.type, a.body, versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=3600', a.etag);
        return true;
      }
      default:
        return false;
    }
  }

  /** The HTML 404 page for a browser asking for a path no route knows. */
  notFound(res: ServerResponse, path: string): void {
    res.setHeader('Vary', 'Accept');
    sendHtml(res, 404, notFoundPage(path), 'no-cache');
  }
}

/** Path parameters of `template` in `path` (each `{name}` is one segment), percent-decoded where valid. */
function paramsOf(template: string, path: string): Record<string, string> {
  const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  if (names.length === 0) return {};
  const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '([^/]+)')}/?$`);
  const m = pattern.exec(path);
  const out: Record<string, string> = {};
  names.forEach((n, i) => {
    const v = m?.[i + 1] ?? '';
    try {
      out[n] = decodeURIComponent(v);
    } catch {
      out[n] = v;
    }
  });
  return out;
}

function sendHtml(res: ServerResponse, status: number, body: SafeHtml, cacheControl: string): void {
  res.statusCode = status;
  for (const [k, v] of Object.entries(PAGE_HEADERS)) res.setHeader(k, v);
  res.setHeader('Cache-Control', cacheControl);
  res.end(body.value);
}

function sendFile(res: ServerResponse, type: string, body: Buffer, cacheControl: string, etag?: string): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  sendDocument(res, type, body, cacheControl, etag);
}
