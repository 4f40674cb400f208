import type { WalletMonitorDeadLetter, WalletMonitorDeliveryAttempt, WalletMonitorSubscription } from '@acg/schemas';
import {
  deliveryErrorMessage,
  EVENT_PRICE_BASE_UNITS,
  RENEWAL_MIN_BALANCE_BASE_UNITS,
  SubscriptionForbiddenError,
  SubscriptionNotFoundError,
} from '@acg/wallet-monitor';
import { html, type SafeHtml } from '../html.js';
import type { PageContext, PageResult, WebPage } from '../page.js';
import { timeTag } from './components.js';
import { notFoundPage } from './notFound.js';
import { accountDocument, scrollTable, signedInBar, signInView, usdc, viewerOf } from './signedInPages.js';

/** Everything the signed-in subscription view shows, read with the owner's account. */
interface SubscriptionData {
  account: `0x${string}`;
  view: WalletMonitorSubscription;
  deadLetters: WalletMonitorDeadLetter[];
  attempts: WalletMonitorDeliveryAttempt[];
  balance: bigint;
}

const unixTime = (s: number | null) => timeTag(s === null ? null : new Date(s * 1000).toISOString());

const STATUS_TONE: Record<WalletMonitorSubscription['status'], string> = { active: 'ok', expired: 'bad', cancelled: 'idle' };
const OUTCOME_TONE: Record<WalletMonitorDeliveryAttempt['outcome'], string> = { delivered: 'ok', failed: 'warn', dead_lettered: 'bad', dropped: 'idle' };

function statusBadge(status: WalletMonitorSubscription['status']): SafeHtml {
  return html`<span class="badge badge-${STATUS_TONE[status]}" data-subscription-status="${status}">${status}</span>`;
}

/** The sentence under the status: when it expires or ended, and whether it will renew. */
function lifecycle(d: SubscriptionData): SafeHtml {
  const v = d.view;
  if (v.status === 'cancelled') return html`Cancelled at ${unixTime(v.cancelled_at)}. Queued events are dropped; create a new subscription to resume.`;
  if (v.status === 'expired')
    return html`Expired at ${unixTime(v.expires_at)}: the metered account held less than ${usdc(RENEWAL_MIN_BALANCE_BASE_UNITS)} then. Create a new subscription to resume.`;
  const renews =
    d.balance >= RENEWAL_MIN_BALANCE_BASE_UNITS
      ? html`It renews by 30 days then, for free, while your metered account holds at least ${usdc(RENEWAL_MIN_BALANCE_BASE_UNITS)} (it holds ${usdc(d.balance)} now).`
      : html`<strong>It will not renew unless you deposit:</strong> renewal needs at least ${usdc(RENEWAL_MIN_BALANCE_BASE_UNITS)} in your metered account, which holds ${usdc(d.balance)}.`;
  return html`Active until ${unixTime(v.expires_at)}; renewed ${v.renewals} ${v.renewals === 1 ? 'time' : 'times'}. ${renews}`;
}

/** `last_error` as a panel: the code, the human sentence, when, and the HTTP status when something was sent. */
function lastErrorPanel(v: WalletMonitorSubscription): SafeHtml {
  const e = v.last_error;
  if (!e) {
    return html`<section aria-labelledby="last-error-heading" id="last-error" data-code="">
<h2 id="last-error-heading">Last error</h2>
<p>None: no delivery attempt has failed since the last successful delivery.</p>
</section>`;
  }
  return html`<section aria-labelledby="last-error-heading" id="last-error" class="alert alert-bad" data-code="${e.code}">
<h2 id="last-error-heading">Last error: <code>${e.code}</code></h2>
<p>${e.message}</p>
<p class="meta">At ${timeTag(e.at)}${e.status === null ? '; nothing was sent.' : `; the receiver answered HTTP ${e.status === 0 ? '— (no answer)' : e.status}.`}</p>
</section>`;
}

function statsList(v: WalletMonitorSubscription): SafeHtml {
  const d = v.delivery;
  const item = (name: string, label: string, value: string | number, hint: string) =>
    html`<div class="stat" data-stat="${name}"><dt>${label}</dt><dd><span class="stat-value">${value}</span> <span class="meta">${hint}</span></dd></div>`;
  return html`<dl class="stats">
${item('events', 'Events', d.events, 'matched and queued')}
${item('delivered', 'Delivered', d.delivered, '2xx answers')}
${item('pending', 'Pending', d.pending, 'queued or waiting for a retry')}
${item('failed_attempts', 'Failed attempts', d.failed_attempts, 'each retried on the schedule')}
${item('dead_lettered', 'Dead letters', d.dead_lettered, 'gave up; replayable')}
${item('dropped', 'Dropped', d.dropped, 'cancelled, or reorged out, before delivery')}
${item('removed', 'Removed', d.removed, 'delivered, then reorged out: a removed event followed, credited back')}
${item('billed', 'Billed', usdc(d.billed), `${usdc(EVENT_PRICE_BASE_UNITS)} per delivered event still on chain`)}
${item('last_status', 'Last HTTP status', d.last_status === null ? '—' : d.last_status, d.last_delivery_at ? 'last delivery below' : 'no delivery yet')}
</dl>
<p class="meta">Last delivery: ${timeTag(d.last_delivery_at)}.</p>`;
}

/** The recent attempts, newest first, then what each error code among them means (once per code). */
function attemptsTable(attempts: WalletMonitorDeliveryAttempt[]): SafeHtml {
  const codes = new Map(attempts.flatMap((a) => (a.error ? [[a.error.code, a.error.message] as const] : [])));
  const rows = attempts.map(
    (a) => html`<tr data-webhook-id="${a.webhook_id}" data-outcome="${a.outcome}">
<td>${timeTag(a.at)}</td>
<td><code>${a.webhook_id}</code></td>
<td>${a.type}${a.test ? html` <span class="badge badge-info">test</span>` : ''}</td>
<td class="num">${a.attempt}${a.replay > 0 ? html` <span class="meta">(replay ${a.replay})</span>` : ''}</td>
<td><span class="badge badge-${OUTCOME_TONE[a.outcome]}">${a.outcome.replace('_', ' ')}</span></td>
<td class="num">${a.status === null ? '—' : a.status}</td>
<td>${a.error ? html`<code>${a.error.code}</code>` : ''}</td>
</tr>`,
  );
  const head = html`<tr><th scope="col">Time</th><th scope="col">Webhook id</th><th scope="col">Event</th><th scope="col" class="num">Attempt</th><th scope="col">Outcome</th><th scope="col" class="num">HTTP</th><th scope="col">Error</th></tr>`;
  return html`${scrollTable('Recent delivery attempts', head, rows, 'No delivery attempt yet. Send a test event to try the webhook URL.')}
${codes.size ? html`<p class="meta">What the error codes mean:</p><dl class="facts codes">${[...codes].map(([code, message]) => html`<dt><code>${code}</code></dt><dd>${message}</dd>`)}</dl>` : ''}`;
}

function deadLetterTable(subscriptionId: string, letters: WalletMonitorDeadLetter[]): SafeHtml {
  const api = `/v1/wallet-monitor/${subscriptionId}/dead-letters/replay`;
  const rows = letters.map(
    (d) => html`<tr data-dead-letter="${d.webhook_id}">
<td><code>${d.webhook_id}</code></td>
<td>${d.event.type}${d.event.test ? html` <span class="badge badge-info">test</span>` : ''} on ${d.event.chain}, block ${d.event.block_number}</td>
<td class="num">${d.attempts}</td>
<td class="text"><code>${d.last_error}</code>: ${deliveryErrorMessage(d.last_error)}</td>
<td>${unixTime(d.dead_lettered_at)}</td>
<td><form data-api="${api}" data-body="${JSON.stringify({ webhook_ids: [d.webhook_id] })}" data-done="Queued ${d.webhook_id} for delivery again; it keeps its webhook-id.">
<button type="submit" class="secondary" aria-label="Replay ${d.webhook_id}">Replay</button></form></td>
</tr>`,
  );
  const head = html`<tr><th scope="col">Webhook id</th><th scope="col">Event</th><th scope="col" class="num">Attempts</th><th scope="col">Last error</th><th scope="col">Dead-lettered</th><th scope="col">Action</th></tr>`;
  return html`${scrollTable('Dead letters', head, rows, 'No dead letters.')}
${
  letters.length > 1
    ? html`<form data-api="${api}" data-body="{}" data-done="Queued every dead letter for delivery again."><button type="submit">Replay all ${letters.length} dead letters</button></form>`
    : ''
}`;
}

/** The signed-in view: status and lifecycle, last error, stats, actions, delivery attempts, dead letters. */
function signedInView(d: SubscriptionData): SafeHtml {
  const v = d.view;
  const id = v.subscription_id;
  return html`<div id="account-view" data-signed-in="true" data-pending="${v.delivery.pending}" data-dead-letters="${d.deadLetters.length}">
${signedInBar(d.account)}
<section aria-labelledby="status-heading">
<h2 id="status-heading">Status ${statusBadge(v.status)}</h2>
<p>${lifecycle(d)}</p>
<dl class="facts">
<dt>Webhook URL</dt><dd><code>${v.webhook_url}</code></dd>
<dt>Chains</dt><dd>${v.chains.join(', ')}</dd>
<dt>Events</dt><dd>${v.events.join(', ')}</dd>
<dt>Confirmations</dt><dd>${v.confirmations === 0 ? 'delivered at the chain watcher’s depth' : `${v.confirmations} blocks on top of the event’s block`}</dd>
<dt>Created</dt><dd>${unixTime(v.created_at)}</dd>
<dt>Expires</dt><dd>${unixTime(v.expires_at)}</dd>
<dt>Metered account</dt><dd>${usdc(d.balance)} <span class="meta">(deposit with <code>POST /v1/account/deposit</code>, paid with x402)</span></dd>
</dl>
<details><summary>${v.addresses.length} watched ${v.addresses.length === 1 ? 'address' : 'addresses'}</summary>
<ul class="plain mono-list">${v.addresses.map((a) => html`<li><code>${a}</code></li>`)}</ul></details>
</section>
${lastErrorPanel(v)}
<section aria-labelledby="deliveries-heading">
<h2 id="deliveries-heading">Deliveries</h2>
${statsList(v)}
${
  v.status === 'active'
    ? html`<form data-api="/v1/wallet-monitor/${id}/test-event" data-body="{}" data-done="A test event is queued: it is signed, retried and billed like any event.">
<p class="actions"><button type="submit" id="send-test-event">Send test event</button></p>
<p class="meta">A test event has a real event's shape with <code>"test": true</code>, zero hashes and amount 0. It costs ${usdc(EVENT_PRICE_BASE_UNITS)} when delivered, like any event.</p>
</form>`
    : ''
}
<h3 id="attempts-heading">Recent attempts</h3>
${attemptsTable(d.attempts)}
</section>
<section aria-labelledby="dead-letters-heading">
<h2 id="dead-letters-heading">Dead letters <span class="badge badge-${d.deadLetters.length ? 'bad' : 'idle'}" id="dead-letter-count">${d.deadLetters.length}</span></h2>
<p>Events whose every attempt failed (8 attempts over about 27 hours). A replay queues them again with the same <code>webhook-id</code>; each is billed only when delivered.</p>
${deadLetterTable(id, d.deadLetters)}
</section>
</div>`;
}

const WHAT =
  'This page shows the subscription to its owner: status, expiry and renewal, why the last delivery failed, every recent attempt, and the dead letters, which you can replay. Sign in with the wallet that created it.';

/** `/subscriptions/{subscription_id}`: a wallet-monitor subscription for its owner (SIWE bearer token). */
async function render(ctx: PageContext): Promise<PageResult> {
  const id = ctx.params.subscription_id ?? '';
  const viewer = await viewerOf(ctx);
  const page = (view: SafeHtml, title = `Subscription ${id}`) =>
    accountDocument({
      title,
      description: 'A wallet-monitor subscription: status, last error, deliveries and dead letters.',
      heading: html`Subscription <code class="id">${id}</code>`,
      lead: 'Webhook deliveries of a wallet-monitor subscription (transfer events on Ethereum, Base and Arbitrum).',
      view,
    });
  const wm = ctx.services.walletMonitor;
  // an unknown id is a 404 page for everyone, not a sign-in card that looks like a real subscription
  // (ids are random ULIDs: saying one does not exist tells nothing about the others)
  if (!(await wm.subscriptions.get(id))) return { status: 404, html: notFoundPage(`/subscriptions/${id}`, 'subscription'), cacheControl: 'no-store' };
  if (viewer.kind === 'anonymous') return { html: page(signInView(WHAT)) };
  if (viewer.kind === 'invalid') return { status: 401, html: page(signInView(WHAT, `${viewer.message}`)), cacheControl: 'no-store' };
  try {
    const [view, deadLetters, attempts, balance] = await Promise.all([
      wm.get(id, viewer.account),
      wm.deadLetters(id, viewer.account),
      wm.deliveryAttempts(id, viewer.account, 25),
      ctx.services.ledger.balance(viewer.account),
    ]);
    return { html: page(signedInView({ account: viewer.account, view, deadLetters, attempts, balance })), cacheControl: 'no-store' };
  } catch (e) {
    if (e instanceof SubscriptionNotFoundError) {
      return { status: 404, html: page(signInView(WHAT, `There is no subscription ${id}.`), 'Subscription not found'), cacheControl: 'no-store' };
    }
    if (e instanceof SubscriptionForbiddenError) {
      const notice = `You are signed in as ${viewer.account}, which does not own ${id}. Switch to the owner's account in your wallet, sign out and sign in again.`;
      return { status: 403, html: page(signInView(WHAT, notice)), cacheControl: 'no-store' };
    }
    throw e;
  }
}

export const subscriptionPage: WebPage = { template: '/subscriptions/{subscription_id}', render };
