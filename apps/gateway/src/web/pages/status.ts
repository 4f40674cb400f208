import { type ChainReconciliationReport, readChainReconciliationReport } from '@acg/reconciliation';
import type { HealthDocument, LatencySeriesDocument, LegacyRegistryEntry } from '@acg/schemas';
import { html, jsonScript, type SafeHtml } from '../html.js';
import { layout } from '../layout.js';
import type { PageContext, PageResult, WebPage } from '../page.js';
import { formatMs, healthBadge, operationalBadge, statusBadge, timeTag } from './components.js';

/** Seconds between the page's own refreshes (its script fetches the page again; without script, a meta refresh at twice this); `?refresh=<2..3600>` sets another. */
export const STATUS_REFRESH_SECONDS = 15;

type Series = LatencySeriesDocument['capabilities'][number];

const SOURCE_TEXT: Record<Series['source'], string> = {
  executions_and_probes: 'executions and probes',
  webhook_deliveries: 'webhook deliveries (block confirmation to 2xx)',
};

/** A number or an empty attribute value. */
const attr = (v: number | null | undefined) => (v === null || v === undefined ? '' : String(v));

function minuteText(t: number): string {
  return new Date(t * 1000).toISOString().slice(11, 16);
}

/** One chart: a figure with the hour's window, the uPlot container (drawn by status.js) and the same numbers as a table. */
function chart(s: Series, name: string): SafeHtml {
  const measured = s.points.filter((p) => p.samples > 0);
  return html`<figure class="chart-figure" id="cap-${s.id}" data-chart-figure="${s.id}" data-window-p50="${attr(s.window.p50)}" data-window-p99="${attr(s.window.p99)}" data-window-samples="${s.window.samples}">
<figcaption>${name} <code>${s.id}</code>: p50 ${formatMs(s.window.p50)}, p99 ${formatMs(s.window.p99)} over ${s.window.samples} samples in the last hour (${SOURCE_TEXT[s.source]})</figcaption>
<div class="chart" data-chart="${s.id}" role="img" aria-label="Line chart of ${name} latency per minute over the last hour: p50 and p99 in milliseconds. The numbers are in the table below."></div>
<p class="meta chart-key"><span class="key key-p50" aria-hidden="true"></span> p50 <span class="key key-p99" aria-hidden="true"></span> p99, milliseconds per minute (UTC)</p>
<details><summary>Data table: ${name}</summary>
<div class="table-wrap" role="region" aria-label="Latency per minute of ${s.id}" tabindex="0"><table data-series-table="${s.id}">
<thead><tr><th scope="col">Minute (UTC)</th><th scope="col" class="num">p50</th><th scope="col" class="num">p99</th><th scope="col" class="num">Samples</th><th scope="col" class="num">Failed</th></tr></thead>
<tbody>${measured.map(
    (p) =>
      html`<tr data-t="${p.t}"><th scope="row"><time datetime="${new Date(p.t * 1000).toISOString()}">${minuteText(p.t)}</time></th><td class="num">${formatMs(p.p50)}</td><td class="num">${formatMs(p.p99)}</td><td class="num">${p.samples}</td><td class="num">${p.errors}</td></tr>`,
  )}</tbody>
</table></div>
</details>
</figure>`;
}

/** What a cell shows while nothing has been measured: "no data yet" (`why` for screen readers and the tooltip). */
function noDataYet(why: string): SafeHtml {
  return html`<span class="badge badge-idle" data-no-data title="${why}">no data yet</span><span class="visually-hidden"> (${why})</span>`;
}

function capabilityTable(health: HealthDocument, entries: Map<string, LegacyRegistryEntry>, charted: Set<string>): SafeHtml {
  return html`<div class="table-wrap" role="region" aria-label="Per-capability state" tabindex="0"><table id="capability-health">
<thead><tr><th scope="col">Capability</th><th scope="col">Health</th><th scope="col">Catalog</th><th scope="col" class="num">p50</th><th scope="col" class="num">p99</th><th scope="col" class="num">Samples</th><th scope="col">Last measured</th></tr></thead>
<tbody>${health.capabilities.map((c) => {
    const e = entries.get(c.id);
    return html`<tr data-health-row="${c.id}" data-status="${c.status}" data-p50="${attr(c.latency_ms.p50)}" data-p99="${attr(c.latency_ms.p99)}" data-samples="${c.latency_ms.samples}"${charted.has(c.id) ? '' : html` id="cap-${c.id}"`}>
<th scope="row"><a href="/capabilities/${encodeURIComponent(c.id)}">${e?.name ?? c.id}</a><br><code class="meta">${c.id}</code></th>
<td>${c.latency_ms.samples === 0 && c.status !== 'down' ? noDataYet(`health ${c.status}, no latency sample yet`) : healthBadge(c.status)}</td><td>${e ? statusBadge(e.status) : '—'}</td>
<td class="num">${formatMs(c.latency_ms.p50)}</td><td class="num">${formatMs(c.latency_ms.p99)}</td><td class="num">${c.latency_ms.samples}</td>
<td>${timeTag(c.checked_at)}</td></tr>`;
  })}</tbody>
</table></div>`;
}

function builderSection(b: HealthDocument['builder']): SafeHtml {
  if (!b) return html`<p class="empty" data-builder="none">No bundle builder has reported to this gateway yet.</p>`;
  return html`<dl class="facts" data-builder data-bids="${b.bids_received}" data-submits="${b.submits}" data-accepted="${b.accepted}">
<dt>Bundles accepted into the orderflow pool</dt><dd>${b.bids_received}</dd>
<dt>Blocks submitted to relays</dt><dd>${b.submits === 0 ? noDataYet('no block submitted yet') : html`${b.submits} submissions, ${b.accepted} accepted by a relay`}</dd>
<dt>BLS public key</dt><dd><code>${b.bls_public_key ?? 'not configured'}</code></dd>
</dl>
<div class="table-wrap" role="region" aria-label="Relays" tabindex="0"><table id="relays">
<thead><tr><th scope="col">Relay</th><th scope="col">Status</th><th scope="col" class="num">Submits</th><th scope="col" class="num">Accepted</th><th scope="col">Last submit</th></tr></thead>
<tbody>${b.relays.map(
    (r) =>
      html`<tr data-relay="${r.name}" data-submits="${r.submits}" data-accepted="${r.accepted}"><th scope="row">${r.name}<br><code class="meta">${r.url}</code></th><td>${r.status === 'unknown' && r.submits === 0 ? noDataYet('nothing submitted to this relay yet') : html`<span class="badge badge-${r.status === 'up' ? 'ok' : r.status === 'down' ? 'bad' : 'idle'}">${r.status}</span>`}</td><td class="num">${r.submits}</td><td class="num">${r.accepted}</td><td>${timeTag(r.last_submit_at)}</td></tr>`,
  )}</tbody>
</table></div>`;
}

function walletMonitorSection(w: HealthDocument['wallet_monitor']): SafeHtml {
  if (!w) return html`<p class="empty">The wallet monitor has not reported yet.</p>`;
  const b = w.backlog;
  return html`<dl class="facts" data-wallet-monitor data-waiting="${b.waiting}" data-delayed="${b.delayed}" data-active="${b.active}" data-dead-letters="${b.dead_letters}">
<dt>Webhook delivery latency</dt><dd>${w.delivery_latency_ms.samples === 0 ? noDataYet('no webhook delivered in the last hour') : html`p50 ${formatMs(w.delivery_latency_ms.p50)}, p99 ${formatMs(w.delivery_latency_ms.p99)} over ${w.delivery_latency_ms.samples} deliveries`}</dd>
<dt>Backlog</dt><dd>${b.waiting} waiting, ${b.delayed} waiting for a retry, ${b.active} being delivered</dd>
<dt>Dead letters</dt><dd>${b.dead_letters} deliveries that failed every retry (listed and replayed per subscription)</dd>
</dl>
${
  w.watchers.length
    ? html`<div class="table-wrap" role="region" aria-label="Chain watchers" tabindex="0"><table id="watchers">
<thead><tr><th scope="col">Chain</th><th scope="col" class="num">Head</th><th scope="col" class="num">Last processed block</th><th scope="col" class="num">Confirmations</th><th scope="col" class="num">Reorgs</th><th scope="col">Updated</th></tr></thead>
<tbody>${w.watchers.map(
        (x) =>
          html`<tr><th scope="row">${x.chain}</th><td class="num">${x.head ?? '—'}</td><td class="num">${x.last_processed_block ?? '—'}</td><td class="num">${x.confirmations ?? '—'}</td><td class="num">${x.reorgs}</td><td>${timeTag(x.updated_at)}</td></tr>`,
      )}</tbody>
</table></div>`
    : html`<p class="empty">No chain watcher has reported yet.</p>`
}`;
}

function reconciliationSection(r: ChainReconciliationReport): SafeHtml {
  if (!r.last_run_at) return html`<p class="empty" data-reconciliation="none">The chain reconciliation has not run yet.</p>`;
  return html`<dl class="facts" data-reconciliation data-cursor-block="${attr(r.cursor_block)}" data-matched="${r.matched}" data-repaired="${r.repaired}" data-deferred="${r.deferred}" data-undecided="${r.undecided}">
<dt>Last run</dt><dd>${timeTag(r.last_run_at)}, checked up to block ${r.cursor_block ?? '—'}</dd>
<dt>Payments checked</dt><dd>${r.matched} matched the records, ${r.repaired} repaired (refunded, completed, credit restored or refund re-sent), ${r.deferred} left to the crash-recovery sweep</dd>
<dt>Undecided</dt><dd>${r.undecided} payments an operator must look at (logged with <code>alert: chain_reconciliation_undecided</code>)</dd>
</dl>`;
}

/**
 * `/status`: the operational status (and how it was decided), each capability's health, catalog
 * status and p50/p99 (from `/status/health`), p50/p99 latency charts per minute over the last
 * hour (uPlot, from `/status/series`: samples stored in Redis as traffic and probes happen; the
 * same numbers in a table under each chart), the builder's relays with submits and accepted
 * counts and bids, the wallet monitor's delivery latency, backlog and dead letters, and the chain
 * reconciliation's report (last run, cursor block, matched / repaired / undecided payments). Refreshes
 * itself every {@link STATUS_REFRESH_SECONDS} s (`status.js` fetches the page again and swaps
 * `#status-live`; without script a `<meta http-equiv="refresh">`).
 */
async function render({ services, query }: PageContext): Promise<PageResult> {
  const asked = Number(query.get('refresh'));
  const refresh = Number.isInteger(asked) && asked >= 2 && asked <= 3600 ? asked : STATUS_REFRESH_SECONDS;
  const [health, series, registry, reconciliation] = await Promise.all([
    services.discovery.health(),
    services.discovery.series(),
    services.discovery.registry(),
    readChainReconciliationReport(services.redis, services.keys),
  ]);
  const h = health.value;
  const entries = new Map(registry.value.capabilities.map((c) => [c.id, c]));
  const charted = series.value.capabilities.filter((s) => s.window.samples > 0);
  const chartedIds = new Set(charted.map((s) => s.id));
  const quiet = series.value.capabilities.filter((s) => s.window.samples === 0);
  const main = html`<h1>Status</h1>
<div id="status-live" data-refresh-seconds="${refresh}" data-health-generated-at="${h.generated_at}" data-series-generated-at="${series.value.generated_at}">
<section class="banner" aria-labelledby="op-title">
<h2 id="op-title" class="visually-hidden">Operational status</h2>
<span>Operational status: ${operationalBadge(h.operational_status)}</span>
<span class="meta">${registry.value.network.operational_status_source}.</span>
<span class="meta">Updated ${timeTag(h.generated_at)}; refreshes every ${refresh} s. JSON: <a href="/status/health">/status/health</a>, <a href="/status/series">/status/series</a>.</span>
</section>
<section aria-labelledby="caps-title">
<h2 id="caps-title">Capabilities</h2>
${capabilityTable(h, entries, chartedIds)}
</section>
<section aria-labelledby="charts-title">
<h2 id="charts-title">Latency over the last hour</h2>
<p>p50 and p99 per minute, from every execution and probe as it happens (the wallet monitor: its webhook deliveries).</p>
<div class="charts">${charted.map((s) => chart(s, entries.get(s.id)?.name ?? s.id))}</div>
${charted.length === 0 ? html`<p class="empty" data-no-data>No data yet: no execution or probe has been measured in the last hour.</p>` : ''}
${quiet.length ? html`<p class="empty">No data yet in the last hour: ${quiet.map((s, i) => html`${i ? ', ' : ''}<code>${s.id}</code>`)}.</p>` : ''}
</section>
<section aria-labelledby="builder-title">
<h2 id="builder-title">Bundle builder and relays</h2>
${builderSection(h.builder)}
</section>
<section aria-labelledby="wm-title">
<h2 id="wm-title">Wallet monitor</h2>
${walletMonitorSection(h.wallet_monitor)}
</section>
<section aria-labelledby="recon-title">
<h2 id="recon-title">Reconciliation with the payment chain</h2>
${reconciliationSection(reconciliation)}
</section>
<script type="application/json" id="series-data">${jsonScript(series.value)}</script>
</div>`;
  return {
    html: layout({
      title: 'Status',
      description: 'Operational status, latency over the last hour, builder relays and wallet-monitor backlog of the agent capability gateway.',
      current: '/status',
      main,
      styles: ['uplot.min.css'],
      scripts: ['uplot.min.js', 'status.js'],
      head: html`<noscript><meta http-equiv="refresh" content="${refresh * 2}"></noscript>`,
    }),
    cacheControl: 'no-store',
  };
}

export const statusPage: WebPage = { template: '/status', render };
