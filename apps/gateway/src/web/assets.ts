import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** One static file the pages use: its bytes, media type and a content hash (the `?v=` of its URL and its ETag). */
export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
  /** Path with `?v=<hash>`, for links from pages (served with a one-year `immutable` cache). */
  url: string;
}

const require = createRequire(import.meta.url);

/**
 * Where each file comes from: our own files in `./static` (copied next to the bundle as
 * `dist/static` by the build), and uPlot's browser build and stylesheet from its npm package, so
 * the pages work offline and without any CDN.
 */
const SOURCES: Record<string, { type: string; file: () => string }> = {
  'site.css': { type: 'text/css; charset=utf-8', file: () => own('site.css') },
  'catalog.js': { type: 'text/javascript; charset=utf-8', file: () => own('catalog.js') },
  'status.js': { type: 'text/javascript; charset=utf-8', file: () => own('status.js') },
  'copy.js': { type: 'text/javascript; charset=utf-8', file: () => own('copy.js') },
  'favicon.svg': { type: 'image/svg+xml', file: () => own('favicon.svg') },
  'favicon.ico': { type: 'image/x-icon', file: () => own('favicon.ico') },
  'uplot.min.js': { type: 'text/javascript; charset=utf-8', file: () => require.resolve('uplot/dist/uPlot.iife.min.js') },
  'uplot.min.css': { type: 'text/css; charset=utf-8', file: () => require.resolve('uplot/dist/uPlot.min.css') },
};

function own(name: string): string {
  return fileURLToPath(new URL(`./static/${name}`, import.meta.url));
}

const loaded = new Map<string, Asset>();

/** The asset served at `/assets/{name}`, read once and kept; undefined for an unknown name. */
export function asset(name: string): Asset | undefined {
  const hit = loaded.get(name);
  if (hit) return hit;
  const source = Object.hasOwn(SOURCES, name) ? SOURCES[name] : undefined;
  if (!source) return undefined;
  const body = readFileSync(source.file());
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 16);
  const a: Asset = { body, type: source.type, etag: `"${hash}"`, url: `/assets/${name}?v=${hash}` };
  loaded.set(name, a);
  return a;
}

/** The URL of a known asset, with its content hash (throws for a name that is not in the list: a typo in a page). */
export function assetUrl(name: string): string {
  const a = asset(name);
  if (!a) throw new Error(`unknown asset ${name}`);
  return a.url;
}
