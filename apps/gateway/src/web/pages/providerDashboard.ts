import { ProviderId, type DisputeView, type PayoutView, type ProviderView } from '@acg/schemas';
import { providerView } from '../../routers/providers.js';
import { html, type SafeHtml } from '../html.js';
import type { PageContext, PageResult, WebPage } from '../page.js';
import { formatMs, statusBadge, timeTag } from './components.js';
import { accountDocument, duration, every, scrollTable, signedInBar, signInView, usdc, viewerOf } from './signedInPages.js';
import { notFoundPage } from './notFound.js';

/** What the dashboard explains with the deployment's numbers (docs/decisions.md "Providers": money). */
interface Terms {
  feeBps: number;
  disputeWindowSeconds: number;
  payoutIntervalSeconds: number;
  payoutMinBaseUnits: string;
  disputeAutoResolveSeconds: number;
}

const PAYOUT_TONE: Record<PayoutView['status'], string> = { reserved: 'info', sent: 'ok', failed: 'bad' };
const DISPUTE_TONE: Record<DisputeView['status'], string> = { open: 'warn', refunded: 'bad', released: 'ok' };

function balances(v: ProviderView, terms: Terms): SafeHtml {
  const item = (name: string, label: string, amount: string, hint: string) =>
    html`<div class="stat" data-balance="${name}"><dt>${label}</dt><dd><span class="stat-value">${usdc(amount)}</span> <span class="meta">${hint}</span></dd></div>`;
  return html`<dl class="stats">
${item('held', 'Held', v.balance.held, `your share of recent calls, held for the ${duration(terms.disputeWindowSeconds)} dispute window`)}
${item('available', 'Available', v.balance.available, `paid out ${every(terms.payoutIntervalSeconds)} once it reaches ${usdc(terms.payoutMinBaseUnits)}`)}
${item('paid', 'Paid', v.balance.paid, 'sent to your payout address in USDC on Base')}
</dl>
<p class="meta">The gateway keeps ${terms.feeBps / 100} % of each price (rounded down); a failed call is refunded to the buyer and earns nothing.</p>`;
}

function capabilities(v: ProviderView): SafeHtml {
  const rows = v.capabilities.map(
    (c) => html`<tr data-capability="${c.id}">
<td><a href="/capabilities/${c.id}"><code>${c.id}</code></a></td>
<td>${statusBadge(c.status)}</td>
<td class="num">${c.price_usdc} USDC</td>
<td class="num">${c.stats.calls}</td>
<td class="num">${c.stats.failures}</td>
<td class="num">${formatMs(c.stats.latency_ms_p50)}</td>
<td class="num">${formatMs(c.stats.latency_ms_p99)}</td>
</tr>`,
  );
  const head = html`<tr><th scope="col">Capability</th><th scope="col">Status</th><th scope="col" class="num">Price</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Failures</th><th scope="col" class="num">p50</th><th scope="col" class="num">p99</th></tr>`;
  return scrollTable('Capabilities', head, rows, 'No capabilities.');
}

/** Each offer's trust-v1 score, its main inputs, the dispute-hold tier and, when suspended, why (docs/trust-v1.md). */
function trust(v: ProviderView): SafeHtml {
  const rows = v.capabilities.flatMap((c) => {
    const t = c.trust;
    if (!t) return [];
    return [
      html`<tr data-trust="${c.id}" data-score="${String(t.score)}" data-tier="${t.tier}" data-suspended="${t.suspended ? 'true' : 'false'}">
<td><code>${c.id}</code></td>
<td class="num">${String(t.score)}</td>
<td class="num">${(t.inputs.success_rate * 100).toFixed(1)} %</td>
<td class="num">${String(t.counts.executions)} / ${String(t.counts.probes)}</td>
<td class="num">${String(t.counts.invalid_outputs + t.counts.invalid_signatures)}</td>
<td class="num">${String(t.counts.disputes_opened)} / ${String(t.counts.disputes_lost)}</td>
<td>${t.tier} <span class="meta">(hold ${duration(t.hold_seconds)})</span></td>
<td>${t.suspended ? html`<span class="badge badge-bad">suspended</span> <span class="meta" data-suspension-reason>${t.suspended.reason}; ${String(t.suspended.passing_probes)} passing probe(s) so far</span>` : html`<span class="badge badge-ok">routed</span>`}</td>
</tr>`,
    ];
  });
  const head = html`<tr><th scope="col">Capability</th><th scope="col" class="num">Score</th><th scope="col" class="num">Success (recent)</th><th scope="col" class="num">Executions / probes</th><th scope="col" class="num">Invalid answers</th><th scope="col" class="num">Disputes opened / lost</th><th scope="col">Tier</th><th scope="col">Routing</th></tr>`;
  return scrollTable('Trust', head, rows, 'No scores yet.');
}

function payouts(v: ProviderView): SafeHtml {
  const rows = v.payouts.map(
    (p) => html`<tr data-payout="${p.payout_id}">
<td><code>${p.payout_id}</code></td>
<td class="num">${usdc(p.amount)}</td>
<td><span class="badge badge-${PAYOUT_TONE[p.status]}">${p.status}</span></td>
<td>${p.tx_hash ? html`<code class="hash" data-tx-hash="${p.tx_hash}">${p.tx_hash}</code>` : html`<span class="meta">not sent yet</span>`}</td>
<td>${timeTag(p.created_at)}</td>
</tr>`,
  );
  const head = html`<tr><th scope="col">Payout</th><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Transaction hash</th><th scope="col">Created</th></tr>`;
  return scrollTable('Payouts', head, rows, 'No payouts yet.');
}

/** One open dispute: what the buyer says, the evidence pointers, and the form to answer it. */
function openDispute(d: DisputeView, terms: Terms): SafeHtml {
  const field = `statement-${d.dispute_id}`;
  return html`<article class="card dispute" data-dispute="${d.dispute_id}" aria-labelledby="${d.dispute_id}-heading">
<h3 id="${d.dispute_id}-heading">Dispute <code>${d.dispute_id}</code> <span class="badge badge-${DISPUTE_TONE[d.status]}">${d.status}</span></h3>
<dl class="facts">
<dt>Capability</dt><dd><code>${d.capability_id}</code></dd>
<dt>Execution</dt><dd><code>${d.execution_id}</code></dd>
<dt>Buyer</dt><dd><code>${d.payer}</code></dd>
<dt>Price paid</dt><dd>${usdc(d.amount)}</dd>
<dt>Opened</dt><dd>${timeTag(d.opened_at)}</dd>
<dt>Buyer's reason</dt><dd>${d.reason}</dd>
<dt>Your statement</dt><dd data-statement>${d.statement ?? html`<span class="meta">none yet</span>`}</dd>
</dl>
<form data-api="/api/v1/disputes/${d.dispute_id}/response" data-done="Your statement on ${d.dispute_id} is recorded.">
<label for="${field}">Your response${d.statement ? ' (replaces the statement above)' : ''}</label>
<textarea id="${field}" name="statement" rows="3" required minlength="1" maxlength="4000" aria-describedby="${field}-hint"></textarea>
<p id="${field}-hint" class="meta">Left unresolved for ${duration(terms.disputeAutoResolveSeconds)}, a dispute is released to you if you answered, refunded to the buyer if not.</p>
<p class="actions"><button type="submit">Send response</button></p>
</form>
</article>`;
}

function disputes(v: ProviderView, terms: Terms): SafeHtml {
  const open = v.disputes.filter((d) => d.status === 'open');
  const closed = v.disputes.filter((d) => d.status !== 'open');
  const rows = closed.map(
    (d) => html`<tr data-dispute="${d.dispute_id}">
<td><code>${d.dispute_id}</code></td>
<td><code>${d.capability_id}</code></td>
<td class="num">${usdc(d.amount)}</td>
<td><span class="badge badge-${DISPUTE_TONE[d.status]}">${d.status}</span>${d.resolved_by ? html` <span class="meta">by ${d.resolved_by}</span>` : ''}</td>
<td>${timeTag(d.resolved_at)}</td>
<td>${d.refund?.tx_hash ? html`<code class="hash">${d.refund.tx_hash}</code>` : d.refund ? d.refund.status : ''}</td>
</tr>`,
  );
  const head = html`<tr><th scope="col">Dispute</th><th scope="col">Capability</th><th scope="col" class="num">Price</th><th scope="col">Outcome</th><th scope="col">Resolved</th><th scope="col">Refund transaction</th></tr>`;
  return html`<h3 id="open-disputes-heading">Open <span class="badge badge-${open.length ? 'warn' : 'idle'}" id="open-dispute-count">${open.length}</span></h3>
${open.length ? open.map((d) => openDispute(d, terms)) : html`<p class="empty">No open disputes.</p>`}
<h3 id="closed-disputes-heading">Resolved</h3>
${scrollTable('Resolved disputes', head, rows, 'No resolved disputes.')}`;
}

function signedInView(account: string, v: ProviderView, terms: Terms): SafeHtml {
  return html`<div id="account-view" data-signed-in="true" data-pending="0">
${signedInBar(account)}
<section aria-labelledby="provider-heading">
<h2 id="provider-heading">${v.name} <span class="badge badge-${v.status === 'active' ? 'ok' : 'idle'}">${v.status}</span></h2>
<dl class="facts">
<dt>Payout address</dt><dd><code>${v.address}</code></dd>
<dt>Endpoint</dt><dd><code>${v.endpoint}</code></dd>
<dt>Registered</dt><dd>${timeTag(v.created_at)}</dd>
</dl>
</section>
<section aria-labelledby="balances-heading"><h2 id="balances-heading">Balances</h2>${balances(v, terms)}</section>
<section aria-labelledby="capabilities-heading"><h2 id="capabilities-heading">Capabilities</h2>
<p>Calls and failures since registration; latency is the gateway's measurement of your endpoint (p50 and p99 of recent calls).</p>
${capabilities(v)}</section>
<section aria-labelledby="trust-heading"><h2 id="trust-heading">Trust</h2>
<p>Your trust-v2 score per capability, from the gateway's own records only (formula: <a href="/llms.txt">/llms.txt</a>; signed: <a href="/api/v1/providers/${v.provider_id}/attestation">attestation</a>). Under the routing threshold an offer is suspended until its probes pass again; the tier sets how long your share is held before payout.</p>
${trust(v)}</section>
<section aria-labelledby="payouts-heading"><h2 id="payouts-heading">Payouts</h2>${payouts(v)}</section>
<section aria-labelledby="disputes-heading"><h2 id="disputes-heading">Disputes</h2>
<p>A buyer may dispute a successful call within the dispute window; your share stays held until it is resolved. Answer with your side: the gateway keeps its signed proof of the result and your signature over it as evidence.</p>
${disputes(v, terms)}</section>
</div>`;
}

const WHAT =
  "This dashboard shows a provider's balances (held, available, paid), payouts with their transaction hashes, per-capability calls, failures and latency, and disputes you can answer. Sign in with the provider's payout wallet.";

/** `/providers/{provider_id}`: the provider's dashboard, for its own wallet (SIWE bearer token). */
async function render(ctx: PageContext): Promise<PageResult> {
  const id = ctx.params.provider_id ?? '';
  if (!ProviderId.safeParse(id).success) return { status: 404, html: notFoundPage(`/providers/${id}`, 'provider') };
  const viewer = await viewerOf(ctx);
  const page = (view: SafeHtml) =>
    accountDocument({
      title: `Provider ${id}`,
      description: "A provider's balances, payouts, capability stats and disputes.",
      heading: html`Provider dashboard`,
      lead: html`Provider <code class="id">${id}</code>: your earnings and your capabilities in the catalog.`,
      view,
    });
  if (viewer.kind === 'anonymous') return { html: page(signInView(WHAT)) };
  if (viewer.kind === 'invalid') return { status: 401, html: page(signInView(WHAT, viewer.message)), cacheControl: 'no-store' };
  const record = await ctx.services.providers.store.get(id);
  // another wallet's provider is as unknown as a missing one (as GET /api/v1/providers/{id})
  if (!record || record.address.toLowerCase() !== viewer.account.toLowerCase()) {
    const notice = `There is no provider ${id} for ${viewer.account}. If it is registered with another wallet, switch to that account in your wallet and sign in again.`;
    return { status: 404, html: page(signInView(WHAT, notice)), cacheControl: 'no-store' };
  }
  const c = ctx.services.config.providers;
  const terms: Terms = {
    feeBps: c.feeBps,
    disputeWindowSeconds: c.disputeWindowSeconds,
    payoutIntervalSeconds: c.payoutIntervalSeconds,
    payoutMinBaseUnits: c.payoutMinBaseUnits,
    disputeAutoResolveSeconds: c.disputeAutoResolveSeconds,
  };
  return { html: page(signedInView(viewer.account, await providerView(ctx.services, record), terms)), cacheControl: 'no-store' };
}

export const providerDashboardPage: WebPage = { template: '/providers/{provider_id}', render };
