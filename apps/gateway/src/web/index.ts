export { WEB_PATHS, WebSite, type PageContext, type PageResult, type WebPage } from './routes.js';
export { html, raw, jsonScript, SafeHtml, type HtmlValue } from './html.js';
export { layout, NAV_LINKS, PAGE_HEADERS, SITE_NAME, type PageShell } from './layout.js';
export { prefersHtml } from './negotiate.js';
export { asset, assetUrl } from './assets.js';
