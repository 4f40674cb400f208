import { accountOf, bearerIdentity } from '../../caller.js';
import { formatUnits } from 'viem';
import { html, type HtmlValue, type SafeHtml } from '../html.js';
import { layout } from '../layout.js';
import type { PageContext } from '../page.js';

/**
 * What the signed-in pages (`/providers/{id}`, `/subscriptions/{id}`) share. They are rendered on
 * the server like every page; the data needs the owner's bearer token, which the browser holds
 * (SIWE with the injected wallet, kept in the tab's sessionStorage by `static/account.js`) and
 * sends as `Authorization: Bearer` when it fetches the page again. Without a token the server
 * renders the signed-out view (what the page is, and a sign-in button); with one it renders
 * `#account-view` from the same service calls as the JSON API, which the script puts in place.
 * No cookie is ever set, so no form can be forged across sites (no CSRF), and the page's
 * Content-Security-Policy allows same-origin scripts only.
 */

/** Who is asking: no token, a token that does not resolve (expired, revoked, malformed), or a wallet. */
export type Viewer = { kind: 'anonymous' } | { kind: 'invalid'; message: string } | { kind: 'account'; account: `0x${string}` };

/** Resolves the request's `Authorization: Bearer` token to its wallet (the same token store as the JSON API). */
export async function viewerOf(ctx: PageContext): Promise<Viewer> {
  // the one identity step's Bearer part (`bearerIdentity`): no header → anonymous; refused → invalid with its sentence
  const identity = await bearerIdentity(ctx.services, ctx.req.headers.authorization);
  if (identity === undefined) return { kind: 'anonymous' };
  if (identity.kind === 'refused') return { kind: 'invalid', message: identity.detail };
  const account = accountOf(identity);
  return account ? { kind: 'account', account } : { kind: 'invalid', message: 'This token does not name a wallet.' };
}

/** USDC base units (integer string or bigint, 6 decimals) as `1.25 USDC`. */
export function usdc(baseUnits: string | bigint | number): string {
  return `${formatUnits(BigInt(baseUnits), 6)} USDC`;
}

/** Seconds as a short duration for people: `24 hours`, `7 days`, `90 seconds`. */
export function duration(seconds: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds % 86_400 === 0 && seconds >= 86_400) return plural(seconds / 86_400, 'day');
  if (seconds % 3600 === 0 && seconds >= 3600) return plural(seconds / 3600, 'hour');
  if (seconds % 60 === 0 && seconds >= 60) return plural(seconds / 60, 'minute');
  return plural(seconds, 'second');
}

/** "every hour", "every 2 hours", "every day": a period for people. */
export function every(seconds: number): string {
  const d = duration(seconds);
  return d.startsWith('1 ') ? `every ${d.slice(2)}` : `every ${d}`;
}

/** A table in a horizontally scrollable, keyboard-focusable region (narrow screens), with a caption for screen readers. */
export function scrollTable(label: string, head: SafeHtml, rows: readonly SafeHtml[], empty: string): SafeHtml {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<div class="table-wrap" role="region" aria-label="${label}" tabindex="0">
<table><caption class="visually-hidden">${label}</caption><thead>${head}</thead><tbody>${rows}</tbody></table>
</div>`;
}

/** The signed-out view: what signing in shows and the sign-in button (the wallet signs an EIP-4361 message; no transaction). */
export function signInView(what: string, notice?: string): SafeHtml {
  return html`<div id="account-view" data-signed-in="false" data-pending="0">
${notice ? html`<p class="alert" id="account-notice">${notice}</p>` : ''}
<section aria-labelledby="sign-in-heading" class="card">
<h2 id="sign-in-heading">Sign in with your wallet</h2>
<p>${what}</p>
<p>Signing in asks your browser wallet (an EIP-1193 wallet such as MetaMask) to sign a Sign-In with Ethereum message (EIP-4361). It is not a transaction and costs nothing. The access token stays in this browser tab until you close it or sign out.</p>
<p class="actions"><button type="button" id="sign-in">Sign in with your wallet</button>${notice ? html`<button type="button" id="sign-out" class="secondary">Sign out</button>` : ''}</p>
</section>
</div>`;
}

/** The bar above a signed-in view: who is signed in, refresh and sign out. */
export function signedInBar(account: string): SafeHtml {
  return html`<p class="signed-in meta"><span>Signed in as <code class="id">${account}</code></span>
<span class="actions"><button type="button" id="refresh" class="secondary">Refresh</button><button type="button" id="sign-out" class="secondary">Sign out</button></span></p>`;
}

/** What a signed-in page shell needs. */
export interface AccountPage {
  title: string;
  description: string;
  heading: HtmlValue;
  lead: HtmlValue;
  /** `#account-view`: the signed-out or the signed-in rendering. */
  view: SafeHtml;
  current?: string;
}

/**
 * The document of a signed-in page: heading and lead (the same for everyone), the live status line
 * for the script's messages, and `#account-view`. Loads `account.js` (sign-in, actions, reload).
 */
export function accountDocument(page: AccountPage): SafeHtml {
  return layout({
    title: page.title,
    description: page.description,
    current: page.current,
    styles: ['account.css'],
    scripts: ['account.js'],
    main: html`<h1>${page.heading}</h1>
<p class="lead">${page.lead}</p>
<div id="action-status" class="status-line" role="status" aria-live="polite" hidden></div>
${page.view}`,
  });
}
