import { CapabilityStatus, PRODUCTS, type LegacyRegistryEntry } from '@acg/schemas';
import { html } from '../html.js';
import { layout } from '../layout.js';
import type { PageContext, PageResult, WebPage } from '../page.js';
import { operationalBadge, priceText, statusBadge } from './components.js';
import { SDK_INSTALL_LINES } from './sdkInstall.js';

/** Price filter values of the catalog (`price` query parameter). */
export const PRICE_FILTERS = {
  '': 'Any price',
  free: 'Free',
  paid: 'Fixed price',
  variable: 'Set per request',
} as const;
export type PriceFilter = keyof typeof PRICE_FILTERS;

/**
 * The catalog's filters as read from the query string (`q`, `product`, `status`, `price`,
 * `max_price` in USDC); unknown values are ignored, so any URL renders.
 */
export interface CatalogFilter {
  q: string;
  product: string;
  status: string;
  price: PriceFilter;
  /** Highest fixed price in USDC (decimal); null: no bound. */
  maxPrice: number | null;
}

export function readFilter(query: URLSearchParams): CatalogFilter {
  const product = query.get('product') ?? '';
  const status = query.get('status') ?? '';
  const price = query.get('price') ?? '';
  const max = query.get('max_price')?.trim() ?? '';
  const maxPrice = max !== '' && Number.isFinite(Number(max)) && Number(max) >= 0 ? Number(max) : null;
  return {
    q: (query.get('q') ?? '').trim().slice(0, 200),
    product: (PRODUCTS as readonly string[]).includes(product) ? product : '',
    status: CapabilityStatus.options.includes(status as CapabilityStatus) ? status : '',
    price: Object.hasOwn(PRICE_FILTERS, price) ? (price as PriceFilter) : '',
    maxPrice,
  };
}

/** The text the search looks in: id, name, description, provider, surface (lowercase). */
function searchText(c: LegacyRegistryEntry): string {
  return [c.id, c.name, c.description ?? '', c.provider, c.surface].join(' ').toLowerCase();
}

/**
 * Whether an entry passes the filter. The page's script (`static/catalog.js`) applies the same
 * rules in the browser for instant filtering; keep both in step.
 */
export function matches(c: LegacyRegistryEntry, f: CatalogFilter): boolean {
  if (f.product && c.product !== f.product) return false;
  if (f.status && c.status !== f.status) return false;
  const price = c.price === null ? null : Number(c.price);
  if (f.price === 'free' && price !== 0) return false;
  if (f.price === 'paid' && !(price !== null && price > 0)) return false;
  if (f.price === 'variable' && price !== null) return false;
  if (f.maxPrice !== null && (price === null || price > f.maxPrice)) return false;
  if (f.q) {
    const text = searchText(c);
    if (
      !f.q
        .toLowerCase()
        .split(/\s+/)
        .every((w) => text.includes(w))
    )
      return false;
  }
  return true;
}

const option = (value: string, label: string, selected: string) => html`<option value="${value}"${value === selected ? html` selected` : ''}>${label}</option>`;

/** The gateway's own entries (product `gateway`: execute, jobs, MCP, registry, health, providers), listed after what can be bought. */
export function isInfrastructure(c: LegacyRegistryEntry): boolean {
  return c.product === 'gateway';
}

/**
 * `/`: every capability of `/registry` (the same document, so the same statuses), as cards with
 * product, status badge, price, surface and provider, linking to its page; filters by product,
 * status and price and a text search, as a GET form (works without script; `catalog.js` filters
 * instantly); the operational status on top; links to the machine-readable documents, MCP and the SDKs.
 */
async function render({ services, query }: PageContext): Promise<PageResult> {
  const [registry, health] = await Promise.all([services.discovery.registry(), services.discovery.health()]);
  const doc = registry.value;
  const f = readFilter(query);
  const shown = doc.capabilities.filter((c) => matches(c, f)).length;
  const total = doc.capabilities.length;
  const base = services.publicBaseUrl();
  const up = health.value.capabilities.filter((c) => c.status === 'up').length;
  const measured = health.value.capabilities.filter((c) => c.status !== 'planned').length;

  const card = (c: LegacyRegistryEntry) => {
    const hidden = !matches(c, f);
    return html`<li class="card" data-capability="${c.id}" data-product="${c.product}" data-status="${c.status}" data-price="${c.price ?? ''}" data-search="${searchText(c)}"${hidden ? html` hidden` : ''}>
<h3><a href="/capabilities/${encodeURIComponent(c.id)}">${c.name}</a></h3>
<p class="meta"><code>${c.id}</code></p>
<p>${statusBadge(c.status)} <span class="visually-hidden">Product:</span><span class="badge badge-idle">${c.product}</span></p>
${c.description ? html`<p>${c.description}</p>` : ''}
<dl class="facts">
<dt>Price</dt><dd data-field="price">${priceText(c)}</dd>
<dt>Surface</dt><dd>${c.surface} <span class="meta">(${c.method} ${new URL(c.endpoint).pathname})</span></dd>
<dt>Provider</dt><dd>${c.provider}</dd>
</dl>
</li>`;
  };
  // what you can buy first; the gateway's own entries (execute, MCP, jobs, registry, health, providers) apart, as the ways in
  const buyable = doc.capabilities.filter((c) => !isInfrastructure(c));
  const infrastructure = doc.capabilities.filter(isInfrastructure);

  const main = html`<h1>Capability catalog</h1>
<p class="lead">Paid capabilities for agents and people, executed per call with x402 (USDC on Base). Every entry is listed from <a href="/registry"><code>/registry</code></a>; a capability is LIVE only while its latest probe passed.</p>
<section class="banner" aria-labelledby="opstatus-title">
<h2 id="opstatus-title" class="visually-hidden">Operational status</h2>
<span>Operational status: ${operationalBadge(doc.network.operational_status)}</span>
<span data-testid="up-count">${up} of ${measured} measured capabilities up</span>
<a href="/status">Live status and latency</a>
</section>
<section aria-labelledby="filters-title">
<h2 id="filters-title" class="visually-hidden">Filter capabilities</h2>
<form class="filters" method="get" action="/" role="search" aria-label="Filter capabilities" data-catalog-filters>
<div><label for="f-q">Search</label><input type="search" id="f-q" name="q" value="${f.q}" placeholder="id, name, provider…" autocomplete="off"></div>
<div><label for="f-product">Product</label><select id="f-product" name="product">${option('', 'All products', f.product)}${PRODUCTS.map((p) => option(p, p, f.product))}</select></div>
<div><label for="f-status">Status</label><select id="f-status" name="status">${option('', 'Any status', f.status)}${CapabilityStatus.options.map((s) => option(s, s, f.status))}</select></div>
<div><label for="f-price">Price</label><select id="f-price" name="price">${Object.entries(PRICE_FILTERS).map(([v, l]) => option(v, l, f.price))}</select></div>
<div><label for="f-max">Max price (USDC)</label><input type="number" id="f-max" name="max_price" min="0" step="any" inputmode="decimal" value="${f.maxPrice ?? ''}"></div>
<div class="actions"><button type="submit">Filter</button><a class="button secondary" href="/">Reset</a></div>
</form>
</section>
<section aria-labelledby="list-title">
<h2 id="list-title">Capabilities</h2>
<p id="catalog-count" role="status" aria-live="polite" data-shown="${shown}" data-total="${total}">Showing ${shown} of ${total} capabilities.</p>
<div id="catalog">
<h3 id="buyable-title">Capabilities you can buy</h3>
<ul class="grid plain" aria-labelledby="buyable-title">${buyable.map(card)}</ul>
<h3 id="infrastructure-title">Gateway infrastructure</h3>
<p class="meta">The gateway's own entries: how to reach, pay for and watch the capabilities above (execute, jobs, MCP, registry, health, providers).</p>
<ul class="grid plain" aria-labelledby="infrastructure-title">${infrastructure.map(card)}</ul>
</div>
<p class="empty" id="catalog-empty"${shown > 0 ? html` hidden` : ''}>No capability matches these filters.</p>
</section>
<section aria-labelledby="dev-title">
<h2 id="dev-title">For developers and agents</h2>
<ul>
<li><a href="/openapi.json">OpenAPI 3.0 description</a> of every REST endpoint, and <a href="/llms.txt"><code>llms.txt</code></a> for language models.</li>
<li>MCP (Streamable HTTP): point your MCP host at <code>${base}/mcp</code>; each executable capability is a tool, paid with x402.</li>
<li>Machine-readable catalog: <a href="/gateway-catalog.json"><code>/gateway-catalog.json</code></a> and <a href="/registry"><code>/registry</code></a>; health: <a href="/status/health"><code>/status/health</code></a>.</li>
</ul>
<h3 id="sdk">JavaScript SDK</h3>
<p>npm package <code>agent-capability-gateway-sdk</code>: discovery plus <code>execute(capability_id, input)</code>, paying the x402 challenge by itself within your spend limits. Until it is published on the npm registry, install it from the gateway's repository:</p>
<pre tabindex="0"><code>${SDK_INSTALL_LINES.join('\n')}</code></pre>
<pre tabindex="0"><code>import { createGatewayClient } from 'agent-capability-gateway-sdk';
import { privateKeyToAccount } from 'viem/accounts';

const gateway = createGatewayClient({
  baseUrl: '${base}',
  account: privateKeyToAccount(process.env.PRIVATE_KEY),
  spendLimits: { perCallUsdc: '0.01', totalUsdc: '0.05' },
});
const run = await gateway.execute('intelligence.wallet_balances', { address: '0x…' });</code></pre>
<h3 id="python">Python</h3>
<p>The standard-library client in <code>sdk-python-stub</code> (module <code>acg_gateway</code>) has the same shape.</p>
<pre tabindex="0"><code>from acg_gateway import GatewayClient
gw = GatewayClient("${base}")
for c in gw.capabilities():
    print(c["id"], c["status"], c["price"])</code></pre>
</section>`;
  return {
    html: layout({
      title: 'Capability catalog',
      description: 'Every capability of the agent capability gateway, with status, price and provider.',
      current: '/',
      main,
      scripts: ['catalog.js'],
    }),
  };
}

export const catalogPage: WebPage = { template: '/', render };
