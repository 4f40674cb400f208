import { assetUrl } from './assets.js';
import { html, type HtmlValue, type SafeHtml } from './html.js';

/** A link of the site navigation: `href` and its text. */
export interface NavLink {
  href: string;
  label: string;
}

/** The site navigation, in order (a page marks its own entry with `aria-current="page"`). */
export const NAV_LINKS: readonly NavLink[] = [
  { href: '/', label: 'Catalog' },
  { href: '/status', label: 'Status' },
];

/** Machine-readable documents linked from every footer. */
const FOOTER_LINKS: readonly NavLink[] = [
  { href: '/openapi.json', label: 'OpenAPI' },
  { href: '/registry', label: 'Registry (JSON)' },
  { href: '/gateway-catalog.json', label: 'Catalog (JSON)' },
  { href: '/status/health', label: 'Health (JSON)' },
  { href: '/llms.txt', label: 'llms.txt' },
  { href: '/sitemap.xml', label: 'Sitemap' },
];

/** What {@link layout} needs of a page. */
export interface PageShell {
  /** Document title, without the site name. */
  title: string;
  /** `<meta name="description">`. */
  description?: string;
  /** The `href` of the navigation entry this page belongs to. */
  current?: string;
  /** The contents of `<main>` (the page's own `<h1>` included). */
  main: SafeHtml;
  /** Script asset names loaded at the end of `<body>` (deferred, same origin only). */
  scripts?: readonly string[];
  /** Stylesheet asset names besides `site.css`. */
  styles?: readonly string[];
  /** Extra `<head>` markup (e.g. a canonical link). */
  head?: HtmlValue;
}

/** The site name shown in the header and in every title. */
export const SITE_NAME = 'Agent Capability Gateway';

/**
 * The page shell: `lang`, viewport, title, favicon and stylesheet; a skip link to `<main>`; the
 * landmarks `header` (with the site `nav`), `main` and `footer`. Scripts are external files only,
 * so pages can be served with a strict Content-Security-Policy ({@link PAGE_HEADERS}).
 */
export function layout(page: PageShell): SafeHtml {
  const nav = NAV_LINKS.map((l) => html`<li><a href="${l.href}"${page.current === l.href ? html` aria-current="page"` : ''}>${l.label}</a></li>`);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · ${SITE_NAME}</title>
${page.description ? html`<meta name="description" content="${page.description}">` : ''}
<link rel="icon" href="/favicon.ico" sizes="32x32">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${assetUrl('site.css')}">
${(page.styles ?? []).map((s) => html`<link rel="stylesheet" href="${assetUrl(s)}">`)}
${page.head}
</head>
<body>
<a class="skip-link" href="#main">Skip to main content</a>
<header class="site-header">
<div class="wrap">
<a class="brand" href="/"><img src="/favicon.svg" alt="" width="28" height="28">${SITE_NAME}</a>
<nav class="site-nav" aria-label="Site"><ul>${nav}</ul></nav>
</div>
</header>
<main id="main" class="wrap" tabindex="-1">
${page.main}
</main>
<footer class="site-footer">
<div class="wrap">
<p>Capabilities paid per call with x402 (USDC on Base). Machine-readable documents:</p>
<ul>${FOOTER_LINKS.map((l) => html`<li><a href="${l.href}">${l.label}</a></li>`)}</ul>
</div>
</footer>
${(page.scripts ?? []).map((s) => html`<script src="${assetUrl(s)}" defer></script>`)}
</body>
</html>
`;
}

/**
 * Response headers of every HTML page: a Content-Security-Policy that allows only this origin
 * (no inline scripts; `connect-src 'self'` for the pages that poll JSON), no MIME sniffing, no
 * framing, and `Vary: Accept` because the same path answers JSON clients differently.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  Vary: 'Accept',
};
