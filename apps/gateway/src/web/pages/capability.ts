import { offerCapabilityId, offerSubject, trustFormulaText } from '@acg/provider-directory';
import { PAYMENT_SCHEME_GUIDE } from '@acg/registry';
import type { CapabilityOffer, LegacyRegistryEntry } from '@acg/schemas';
import { html, type SafeHtml } from '../html.js';
import { layout } from '../layout.js';
import type { PageContext, PageResult, WebPage } from '../page.js';
import { formatMs, healthBadge, priceText, statusBadge, timeTag } from './components.js';
import { notFoundPage } from './notFound.js';
import { schemaSection } from './schema.js';
import { snippetsFor } from './snippets.js';

/** What each registry status means, in words (the web page and the MCP capability resource). */
export const STATUS_MEANING: Record<LegacyRegistryEntry['status'], string> = {
  LIVE: 'the latest probe of this capability passed',
  STALE: 'the latest probe failed: the capability is advertised but does not answer as it should',
  PILOT: 'offered, not yet proven by a passing probe',
  PARTIAL: 'part of it works',
  PLANNED: 'not built yet',
};

/**
 * The status sentence of a capability page: {@link STATUS_MEANING}, except for a paid endpoint whose
 * probe saw only its payment challenge (HTTP 402), which says so rather than claiming the capability ran.
 */
export function statusMeaning(status: LegacyRegistryEntry['status'], probeStatus: number | undefined, ran = false): string {
  if (status === 'LIVE' && probeStatus === 402 && ran) {
    return 'the latest probe passed: the endpoint answered with its x402 payment challenge (HTTP 402) and the right terms, and the capability itself ran on the gateway with a valid result (a free run for the probe; no paid call was made)';
  }
  if (status === 'LIVE' && probeStatus === 402) {
    return 'the latest probe passed as far as a probe can go without paying: the endpoint answered with its x402 payment challenge (HTTP 402) and the right terms; no paid call was made';
  }
  return STATUS_MEANING[status];
}

const OFFER_TONE: Record<CapabilityOffer['status'], string> = { live: 'ok', down: 'bad', pilot: 'info' };

/**
 * The offers of a contract side by side (docs/marketplace.md "Offers and their measurements"), from
 * the registry entry's `offers` in its order (cheapest first): provider, price (USDC), p50 and p99
 * latency, success rate, trust score (0-100) and status (`live`, `down`, `pilot`). Empty for a
 * capability without offers (the built-ins).
 */
export function offersSection(offers: readonly CapabilityOffer[] | undefined): SafeHtml | string {
  if (!offers || offers.length === 0) return '';
  const rate = (r: number | null) => (r === null ? '—' : `${(r * 100).toFixed(1)} %`);
  const rows = offers.map(
    (o) => html`<tr data-offer="${o.provider_id}">
<td>${o.provider} <span class="meta"><code>${o.provider_id}</code></span></td>
<td data-field="offer-price">${o.price} ${o.currency}</td>
<td>${formatMs(o.latency_ms_p50)}</td>
<td>${formatMs(o.latency_ms_p99)}</td>
<td>${rate(o.success_rate)}</td>
<td data-field="offer-trust">${o.trust_score === null ? '—' : String(o.trust_score)}</td>
<td><span class="badge badge-${OFFER_TONE[o.status] ?? 'idle'}" data-offer-status="${o.status}">${o.status}</span></td>
</tr>`,
  );
  return html`<section aria-labelledby="offers-title">
<h2 id="offers-title">Offers</h2>
<p>${String(offers.length)} ${offers.length === 1 ? 'provider offers' : 'providers offer'} this contract. A paid call goes to one offer (<code>routing.prefer</code>: trusted by default, cheapest or fastest) and fails over to the next under the same payment.</p>
<div class="table-wrap" role="region" aria-label="Offers of this capability" tabindex="0"><table data-offers>
<thead><tr><th scope="col">Provider</th><th scope="col">Price</th><th scope="col">p50</th><th scope="col">p99</th><th scope="col">Success rate</th><th scope="col">Trust score</th><th scope="col">Status</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>
</section>`;
}

/**
 * `/capabilities/{capability_id}`: one capability of `/registry` (the same entry): description,
 * price, its offers side by side when providers offer it ({@link offersSection}), status and its evidence (last probe: when, URL, HTTP status, body hash), p50/p99 latency
 * from `/status/health`, the input and output schemas as tables (raw JSON collapsed), the example
 * request and response, and copy-paste snippets (curl with the 402 step, JS SDK, Python, MCP).
 * An unknown id is the HTML 404 page.
 */
async function render({ services, params }: PageContext): Promise<PageResult> {
  const id = params.capability_id ?? '';
  const [registry, health] = await Promise.all([services.discovery.registry(), services.discovery.health()]);
  const c = registry.value.capabilities.find((x) => x.id === id);
  if (!c) return { status: 404, html: notFoundPage(`/capabilities/${id}`, 'capability') };
  const h = health.value.capabilities.find((x) => x.id === id);
  const base = services.publicBaseUrl();
  const executable = services.catalog.executable().some((d) => d.id === id);
  const snippets = snippetsFor(c, base, executable);
  // the latest probe record (passed or failed) and the evidence the registry shows
  const record = (await services.probes.all())[id];
  const probe = c.evidence.probe;
  // a provider's offer: its trust-v1 score and whether it is routed (docs/trust-v1.md)
  const owner = services.providers.directory.providers().find((r) => r.offers.some((o) => offerCapabilityId(o) === id));
  const trust = owner ? await services.providers.trust.offerTrust(offerSubject(owner, id)!).catch(() => undefined) : undefined;

  const main = html`<p class="meta"><a href="/">Catalog</a> › ${c.product}</p>
<h1>${c.name}</h1>
<p><code>${c.id}</code> ${statusBadge(c.status)} <span class="badge badge-idle">${c.product}</span></p>
${c.description ? html`<p class="lead">${c.description}</p>` : ''}
<section aria-labelledby="facts-title">
<h2 id="facts-title">Overview</h2>
<dl class="facts">
<dt>Price</dt><dd data-field="price">${priceText(c)}${c.price_base_units !== null ? html` <span class="meta">(${c.price_base_units} base units, 6 decimals)</span>` : ''}</dd>
<dt>Surface</dt><dd>${c.surface}</dd>
<dt>Endpoint</dt><dd><code>${c.method} ${c.endpoint}</code></dd>
<dt>Authentication</dt><dd>${c.auth}</dd>
<dt>Provider</dt><dd>${c.provider}</dd>
${c.x402 ? html`<dt>x402</dt><dd>${c.x402.scheme} on <code>${c.x402.network}</code>, USDC <code>${c.x402.asset}</code>, pay to <code>${c.x402.payTo}</code></dd>` : ''}
${c.x402 ? html`<dt>Which scheme</dt><dd data-field="payment-schemes">${PAYMENT_SCHEME_GUIDE.map((g, i) => html`${i > 0 ? '; ' : ''}<code>${g.scheme}</code>${g.scheme === 'exact' ? '' : ' (where the 402 offers it)'} for ${g.suits}`)}</dd>` : ''}
${c.proof ? html`<dt>Proof</dt><dd>${c.proof}${c.jwks_url ? html` (keys: <a href="${new URL(c.jwks_url).pathname}">JWKS</a>)` : ''}</dd>` : ''}
${c.docs_url ? html`<dt>Docs</dt><dd><a href="${c.docs_url}">${c.docs_url}</a></dd>` : ''}
</dl>
</section>
${offersSection(c.offers)}
<section aria-labelledby="status-title">
<h2 id="status-title">Status and evidence</h2>
<p data-field="status-meaning">${statusBadge(c.status)} ${statusMeaning(c.status, probe?.status, record?.ok === true && record.ran === true)}.</p>
<dl class="facts" data-evidence>
<dt>Source</dt><dd>${c.evidence.source}</dd>
<dt>Last probe</dt><dd data-field="probe-checked-at">${record ? html`${timeTag(record.checked_at)} (${record.ok ? 'passed' : 'failed'})` : 'none recorded'}</dd>
${c.evidence.checked_at ? html`<dt>Last passing probe</dt><dd>${timeTag(c.evidence.checked_at)}</dd>` : ''}
${
  probe
    ? html`<dt>Probe request</dt><dd><code>${probe.method} ${probe.url}</code></dd>
<dt>HTTP status</dt><dd><span data-field="probe-status">${probe.status}</span>${probe.status === 599 ? ' (no HTTP answer: the connection failed or timed out)' : probe.status === 402 ? ' (the x402 payment challenge: a probe never pays)' : ''}</dd>
<dt>Body SHA-256</dt><dd><code data-field="probe-sha256">${probe.body_sha256}</code></dd>`
    : ''
}
${c.evidence.advertised_by ? html`<dt>Advertised by</dt><dd>${c.evidence.advertised_by}</dd>` : ''}
${c.evidence.next_action ? html`<dt>Next action</dt><dd>${c.evidence.next_action}</dd>` : ''}
${c.notes ? html`<dt>Notes</dt><dd>${c.notes}</dd>` : ''}
</dl>
</section>
<section aria-labelledby="latency-title">
<h2 id="latency-title">Latency</h2>
${
  h
    ? html`<dl class="facts" data-latency data-p50="${h.latency_ms.p50 ?? ''}" data-p99="${h.latency_ms.p99 ?? ''}" data-samples="${h.latency_ms.samples}">
<dt>Health</dt><dd>${healthBadge(h.status)}</dd>
<dt>p50</dt><dd>${formatMs(h.latency_ms.p50)}</dd>
<dt>p99</dt><dd>${formatMs(h.latency_ms.p99)}</dd>
<dt>Samples</dt><dd>${h.latency_ms.samples} measured (executions and probes)</dd>
<dt>Last measured</dt><dd>${timeTag(h.checked_at)}</dd>
</dl>
<p><a href="/status#cap-${c.id}">Latency over the last hour</a></p>`
    : html`<p class="empty">No measurement yet.</p>`
}
</section>
<section aria-labelledby="trust-title">
<h2 id="trust-title">Trust</h2>
${
  trust && owner
    ? html`<dl class="facts" data-trust-score="${String(trust.score)}"><dt>Score (trust-v2)</dt><dd>${String(trust.score)} / 100 ${trust.suspended ? html`<span class="badge badge-bad">suspended</span>` : html`<span class="badge badge-ok">routed</span>`}</dd>
<dt>Executions / probes</dt><dd>${String(trust.counts.executions)} / ${String(trust.counts.probes)}</dd>
<dt>Signed scores</dt><dd><a href="/api/v1/providers/${owner.provider_id}/attestation">attestation of ${owner.name}</a></dd></dl>`
    : html`<p class="meta">Run by the gateway itself: no provider score.</p>`
}
<details><summary>How scores are computed</summary><pre tabindex="0" data-trust-formula>${trustFormulaText().join('\n')}</pre></details>
</section>
<section aria-labelledby="schemas-title">
<h2 id="schemas-title">Input and output</h2>
${schemaSection('input', 'Input', c.input_schema)}
${schemaSection('output', 'Output', c.output_schema)}
</section>
<section aria-labelledby="example-title">
<h2 id="example-title">Example</h2>
<h3>Request</h3>
${c.example_request === null || c.example_request === undefined ? html`<p class="empty">No request body.</p>` : html`<pre tabindex="0"><code id="example-request">${JSON.stringify(c.example_request, null, 2)}</code></pre>`}
<h3>Response</h3>
${c.example_response === null || c.example_response === undefined ? html`<p class="empty">No example response published.</p>` : html`<pre tabindex="0"><code id="example-response">${JSON.stringify(c.example_response, null, 2)}</code></pre>`}
</section>
<section aria-labelledby="use-title">
<h2 id="use-title">Use it</h2>
${snippets.map(
  (s) => html`<div class="snippet" data-snippet="${s.id}">
<div class="snippet-head"><h3 id="snippet-${s.id}-title">${s.title}</h3><button type="button" class="secondary" data-copy="snippet-${s.id}" aria-label="Copy the ${s.title} snippet" hidden>Copy</button></div>
<pre tabindex="0" aria-labelledby="snippet-${s.id}-title"><code id="snippet-${s.id}">${s.code}</code></pre>
</div>`,
)}
</section>`;
  return { html: layout({ title: `${c.name} (${c.id})`, description: c.description, current: '/', main, scripts: ['copy.js'] }) };
}

export const capabilityPage: WebPage = { template: '/capabilities/{capability_id}', render };
