/** Most URLs one sitemap file may hold (sitemaps.org protocol). */
export const SITEMAP_MAX_URLS = 50_000;

/** One sitemap URL: `path` relative to the base URL, optional `lastmod` (W3C datetime), `changefreq`, `priority` (0..1). */
export interface SitemapEntry {
  path: string;
  lastmod?: string;
  changefreq?: 'always' | 'hourly' | 'daily' | 'weekly' | 'monthly' | 'yearly' | 'never';
  priority?: number;
}

/** Escape the five XML special characters (`& < > " '`) for element content. */
export function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&apos;');
}

/**
 * A sitemaps.org 0.9 `urlset` document (UTF-8 XML) listing `baseUrl` + each path. Paths must be
 * relative to `baseUrl` (`/registry`); URLs are normalized by WHATWG `URL` (percent-encoding what
 * must be) and then entity-escaped, so `?a=1&b=2` is written `?a=1&amp;b=2`.
 * Throws `RangeError` for more than {@link SITEMAP_MAX_URLS} entries or a path that is an absolute URL,
 * and `TypeError` (from `URL`) for an invalid `baseUrl`.
 */
export function renderSitemap(baseUrl: string, paths: readonly (string | SitemapEntry)[]): string {
  if (paths.length > SITEMAP_MAX_URLS) throw new RangeError(`a sitemap holds at most ${SITEMAP_MAX_URLS} URLs`);
  const base = new URL(baseUrl).href.replace(/\/+$/, '');
  const urls = paths.map((p) => {
    const entry = typeof p === 'string' ? { path: p } : p;
    if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(entry.path)) throw new RangeError(`sitemap path must be relative: ${entry.path}`);
    const loc = new URL(`${base}${entry.path.startsWith('/') ? '' : '/'}${entry.path}`).href;
    const children = [`<loc>${escapeXml(loc)}</loc>`];
    if (entry.lastmod) children.push(`<lastmod>${escapeXml(entry.lastmod)}</lastmod>`);
    if (entry.changefreq) children.push(`<changefreq>${entry.changefreq}</changefreq>`);
    if (entry.priority !== undefined) {
      if (!(entry.priority >= 0 && entry.priority <= 1)) throw new RangeError('sitemap priority must be between 0 and 1');
      children.push(`<priority>${entry.priority.toFixed(1)}</priority>`);
    }
    return `  <url>${children.join('')}</url>`;
  });
  return ['<?xml version="1.0" encoding="UTF-8"?>', '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">', ...urls, '</urlset>', ''].join('\n');
}

/** The discovery paths a gateway's sitemap lists (docs/spec-notes.md 4 "Discovery"). */
export const SITEMAP_PATHS = ['/gateway-catalog.json', '/registry', '/discovery/resources', '/llms.txt', '/openapi.json', '/status/health'] as const;

/** When each discovery document last changed: W3C datetimes (RFC 3339 UTC, e.g. `2025-01-02T03:04:05.678Z`). */
export interface DiscoveryTimes {
  /** `generated_at` of the catalog documents served now (`/gateway-catalog.json`, `/registry`, `/discovery/resources`, `/llms.txt`, rebuilt at most every 60 s). */
  documents: string;
  /** Last change of the set of capabilities (a provider registered or retired; process start): `/openapi.json` lists the executable ones. */
  catalogChanged: string;
  /** Generation time of the health document (`/status/health`, rebuilt every 10 s). */
  health: string;
}

/**
 * The entries of the gateway's sitemap ({@link SITEMAP_PATHS} in order), each with its `lastmod`
 * (sitemaps.org: when the page last changed) and a `changefreq` hint: health `always`, the catalog
 * documents `hourly` (probes and providers change them), OpenAPI `daily`.
 */
export function discoverySitemapEntries(times: DiscoveryTimes): SitemapEntry[] {
  return SITEMAP_PATHS.map((path): SitemapEntry => {
    if (path === '/status/health') return { path, lastmod: times.health, changefreq: 'always' };
    if (path === '/openapi.json') return { path, lastmod: times.catalogChanged, changefreq: 'daily' };
    return { path, lastmod: times.documents, changefreq: 'hourly' };
  });
}
