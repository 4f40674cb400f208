import { describe, expect, it } from 'vitest';
import { SITEMAP_MAX_URLS, SITEMAP_PATHS, discoverySitemapEntries, escapeXml, renderSitemap } from '../src/index.js';
import { xmlProblems } from './helpers.js';

describe('renderSitemap (sitemaps.org 0.9)', () => {
  it('is well-formed XML with the sitemaps namespace and one <loc> per path', () => {
    const xml = renderSitemap('http://127.0.0.1:8080', SITEMAP_PATHS);
    expect(xmlProblems(xml)).toEqual([]);
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">')).toBe(true);
    const locs = [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]);
    expect(locs).toEqual(SITEMAP_PATHS.map((p) => `http://127.0.0.1:8080${p}`));
  });

  it('escapes & and the other XML special characters', () => {
    const xml = renderSitemap('https://gw.example.com/', ['/search?a=1&b=2&c=3', { path: '/', lastmod: `<'&">` }]);
    expect(xmlProblems(xml)).toEqual([]);
    expect(xml).toContain('<loc>https://gw.example.com/search?a=1&amp;b=2&amp;c=3</loc>');
    expect(xml).toContain('<lastmod>&lt;&apos;&amp;&quot;&gt;</lastmod>');
    expect(xml).not.toMatch(/&(?!amp;|lt;|gt;|quot;|apos;)/);
    expect(escapeXml(`a&b<c>d"e'f`)).toBe('a&amp;b&lt;c&gt;d&quot;e&apos;f');
  });

  it('the checker itself catches a bare & and bad nesting', () => {
    expect(xmlProblems('<a>x & y</a>')).not.toEqual([]);
    expect(xmlProblems('<a><b></a></b>')).not.toEqual([]);
    expect(xmlProblems('<a></a><b></b>')).not.toEqual([]);
  });

  it('keeps a base path prefix, percent-encodes, and writes optional fields', () => {
    const xml = renderSitemap('https://gw.example.com/v2/', [{ path: 'docs/a b', lastmod: '2025-01-02', changefreq: 'daily', priority: 0.5 }]);
    expect(xmlProblems(xml)).toEqual([]);
    expect(xml).toContain(
      '<url><loc>https://gw.example.com/v2/docs/a%20b</loc><lastmod>2025-01-02</lastmod><changefreq>daily</changefreq><priority>0.5</priority></url>',
    );
  });

  it('refuses absolute URLs, bad priorities and more than 50,000 URLs', () => {
    expect(() => renderSitemap('https://gw.example.com', ['https://evil.example.com/'])).toThrow(RangeError);
    expect(() => renderSitemap('https://gw.example.com', [{ path: '/', priority: 2 }])).toThrow(RangeError);
    expect(() => renderSitemap('https://gw.example.com', Array(SITEMAP_MAX_URLS + 1).fill('/'))).toThrow(RangeError);
  });

  it('dates every discovery document with lastmod', () => {
    const times = { documents: '2025-01-02T03:04:05.678Z', catalogChanged: '2025-01-01T00:00:00.000Z', health: '2025-01-02T03:04:10.000Z' };
    const xml = renderSitemap('http://127.0.0.1:8080', discoverySitemapEntries(times));
    expect(xmlProblems(xml)).toEqual([]);
    const urls = [...xml.matchAll(/<url><loc>([^<]*)<\/loc><lastmod>([^<]*)<\/lastmod>/g)].map((m) => [m[1].replace('http://127.0.0.1:8080', ''), m[2]]);
    expect(urls).toEqual([
      ['/gateway-catalog.json', times.documents],
      ['/registry', times.documents],
      ['/discovery/resources', times.documents],
      ['/llms.txt', times.documents],
      ['/openapi.json', times.catalogChanged],
      ['/status/health', times.health],
    ]);
  });
});
