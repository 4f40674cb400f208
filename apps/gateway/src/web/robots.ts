import { DISCOVERY_DOCUMENTS } from '@acg/registry';

/**
 * `/robots.txt` (RFC 9309): crawlers may read the pages and the discovery documents; the API,
 * MCP, tRPC and metrics paths are not for crawling (they are paid, signed or operational).
 */
export function robotsTxt(baseUrl: string): string {
  const allow = ['/', '/capabilities/', '/status', ...DISCOVERY_DOCUMENTS.map((d) => d.path), '/llms.txt', '/sitemap.xml', '/.well-known/jwks.json'];
  const lines = [
    'User-agent: *',
    ...[...new Set(allow)].map((p) => `Allow: ${p}`),
    'Disallow: /api/',
    'Disallow: /v1/',
    'Disallow: /trpc/',
    'Disallow: /mcp',
    'Disallow: /metrics',
    '',
    `Sitemap: ${baseUrl}/sitemap.xml`,
    '',
  ];
  return lines.join('\n');
}
