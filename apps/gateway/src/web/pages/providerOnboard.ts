import { OfferProduct, ProviderRegistration } from '@acg/schemas';
import { z } from 'zod';
import { html, type SafeHtml } from '../html.js';
import { layout } from '../layout.js';
import type { PageContext, PageResult, WebPage } from '../page.js';
import { duration, every, usdc } from './signedInPages.js';

/** A JSON Schema property as `z.toJSONSchema` writes it: the constraints the form repeats as HTML attributes. */
interface PropertySchema {
  type?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
}

/**
 * The registration body's JSON Schema (from the zod schema `ProviderRegistration`, the same
 * definition the API validates with): the form's `pattern`, `minlength`, `maxlength`, `min`, `max`
 * and `required` come from it, so the browser checks what the server will check.
 */
const registration = z.toJSONSchema(ProviderRegistration, { io: 'input', unrepresentable: 'any' }) as unknown as {
  properties: Record<string, PropertySchema> & {
    capabilities: { maxItems: number; items: { properties: Record<string, PropertySchema>; required: string[] } };
  };
  required: string[];
};
const top = registration.properties;
const offer = top.capabilities.items;
const MAX_OFFERS = top.capabilities.maxItems;

/**
 * A JSON Schema `pattern` as an HTML `pattern` attribute. Browsers compile the attribute with the
 * RegExp `v` flag, where a literal `-` inside a character class must be escaped; a pattern that
 * does not compile is ignored by the browser, so the check would silently vanish.
 */
export function htmlPattern(pattern: string): string {
  return pattern.replace(/\[([^\]]*)\]/g, (_m, body: string) => `[${body.replace(/^-|(?<!\\)-$/g, '\\-')}]`);
}

/** The constraint attributes of one property (`required` when the schema requires it). */
function constraints(p: PropertySchema, required: boolean): SafeHtml {
  return html`${required ? html` required` : ''}${p.pattern ? html` pattern="${htmlPattern(p.pattern)}"` : ''}${p.minLength !== undefined ? html` minlength="${p.minLength}"` : ''}${p.maxLength !== undefined ? html` maxlength="${p.maxLength}"` : ''}${p.minimum !== undefined ? html` min="${p.minimum}"` : ''}${p.maximum !== undefined ? html` max="${p.maximum}"` : ''}`;
}

/** A labelled field with its hint and its (initially hidden) error slot, both tied to the control by `aria-describedby`. */
function field(id: string, label: string, hint: string, control: (describedBy: string) => SafeHtml): SafeHtml {
  return html`<div class="field">
<label for="${id}">${label}</label>
${control(`${id}-hint ${id}-error`)}
<p id="${id}-hint" class="hint">${hint}</p>
<p id="${id}-error" class="field-error" hidden></p>
</div>`;
}

const EXAMPLE_INPUT_SCHEMA = {
  type: 'object',
  properties: { text: { type: 'string', minLength: 1, maxLength: 1000 } },
  required: ['text'],
  additionalProperties: false,
};
const EXAMPLE_OUTPUT_SCHEMA = { type: 'object', properties: { upper: { type: 'string' } }, required: ['upper'] };
const EXAMPLE_REQUEST = { text: 'hello' };
const pretty = (v: unknown) => JSON.stringify(v, null, 2);
const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The fieldset of offer `i` (a number, or `__i__` in the template the script copies for another offer). */
function offerFieldset(i: number | '__i__'): SafeHtml {
  const n = i === '__i__' ? '__n__' : i + 1;
  const id = (name: string) => `offer-${i}-${name}`;
  const req = (name: string) => offer.required.includes(name);
  const p = offer.properties;
  const timeout = p.timeout_ms;
  return html`<fieldset class="offer" data-index="${i}">
<legend>Capability ${n}</legend>
${field(id('name'), 'Name', 'Lowercase letters, digits and _, starting with a letter. The capability id is <product>.<name>, unique in the catalog.', (d) => html`<input type="text" id="${id('name')}" name="name" autocomplete="off" spellcheck="false" placeholder="upper_text" aria-describedby="${d}" data-pattern-hint="must be lowercase letters, digits or _, starting with a letter."${constraints(p.name, req('name'))}>`)}
${field(id('product'), 'Product', 'Where it is listed: intelligence (data and answers) or mev.', (d) => html`<select id="${id('product')}" name="product" aria-describedby="${d}">${OfferProduct.options.map((o) => html`<option value="${o}"${o === p.product.default ? html` selected` : ''}>${o}</option>`)}</select>`)}
${field(id('description'), 'Description', 'One or two sentences for the catalog: what it does, what it returns.', (d) => html`<textarea id="${id('description')}" name="description" rows="2" aria-describedby="${d}"${constraints(p.description, req('description'))}></textarea>`)}
${field(id('price_usdc'), 'Price per call (USDC)', 'A decimal amount greater than 0 with at most 6 decimals, e.g. 0.001. Buyers pay it with x402; your share is the price minus the fee.', (d) => html`<input type="text" inputmode="decimal" id="${id('price_usdc')}" name="price_usdc" autocomplete="off" placeholder="0.001" aria-describedby="${d}" data-pattern-hint="must be a decimal USDC amount with at most 6 decimals, e.g. 0.001."${constraints({ ...p.price_usdc, pattern: '^(0|[1-9]\\d*)(\\.\\d{1,6})?$' }, req('price_usdc'))}>`)}
${field(id('timeout_ms'), 'Timeout (milliseconds)', `How long the gateway waits for your answer, ${timeout.minimum} to ${timeout.maximum}.`, (d) => html`<input type="number" id="${id('timeout_ms')}" name="timeout_ms" step="1" value="${String(timeout.default ?? 30000)}" aria-describedby="${d}"${constraints(timeout, true)}>`)}
<div class="field field-check">
<input type="checkbox" id="${id('accepts_objective')}" name="accepts_objective" aria-describedby="${id('accepts_objective')}-hint">
<label for="${id('accepts_objective')}">Accepts an objective</label>
<p id="${id('accepts_objective')}-hint" class="hint">Jobs without explicit steps may call it with {"objective": "&lt;text&gt;"}; the input schema must accept that.</p>
</div>
${field(id('input_schema'), 'Input schema (JSON Schema 2020-12)', 'A JSON object. The gateway validates every input against it before payment.', (d) => html`<textarea id="${id('input_schema')}" name="input_schema" rows="7" class="mono" spellcheck="false" required aria-describedby="${d}">${pretty(EXAMPLE_INPUT_SCHEMA)}</textarea>`)}
${field(id('output_schema'), 'Output schema (JSON Schema 2020-12)', 'A JSON object describing an object ("type": "object"). Your answers must match it, or the call fails and is refunded.', (d) => html`<textarea id="${id('output_schema')}" name="output_schema" rows="6" class="mono" spellcheck="false" required aria-describedby="${d}">${pretty(EXAMPLE_OUTPUT_SCHEMA)}</textarea>`)}
${field(id('example_request'), 'Example request (JSON)', 'An input valid against the input schema. The prober sends it (free, signed) to make the capability LIVE, and the catalog shows it.', (d) => html`<textarea id="${id('example_request')}" name="example_request" rows="3" class="mono" spellcheck="false" required aria-describedby="${d}">${pretty(EXAMPLE_REQUEST)}</textarea>`)}
</fieldset>`;
}

/** `/providers/onboard`: the terms, then the form that connects a wallet, signs the challenge and registers. */
async function render({ services }: PageContext): Promise<PageResult> {
  const c = services.config.providers;
  const main = html`<h1>Become a provider</h1>
<p class="lead">List your own capability in this catalog. Agents and people call it through the gateway and pay per call in USDC on Base (x402); the gateway calls your HTTPS endpoint with signed requests and pays your share to your wallet.</p>
<section aria-labelledby="terms-heading">
<h2 id="terms-heading">How it works</h2>
<ul>
<li>The gateway keeps ${c.feeBps / 100} % of each price (rounded down). Your share is held for ${duration(c.disputeWindowSeconds)}, the window in which a buyer may dispute a call, then becomes available.</li>
<li>${capitalize(every(c.payoutIntervalSeconds))}, an available balance of at least ${usdc(c.payoutMinBaseUnits)} is sent to your wallet address as one USDC transfer on Base.</li>
<li>A call that fails (an answer other than 2xx, a timeout, or a result that does not match your output schema) is refunded to the buyer; it earns nothing.</li>
<li>Your capability is <strong>PILOT</strong> until the gateway's prober calls it with your example request and gets a valid answer; then it is <strong>LIVE</strong> while probes pass.</li>
<li>Your endpoint must use https (plain http only to a loopback host in development), resolve to a public address, and answer GET. Calls are <code>POST {endpoint}</code> with <code>{capability_id, execution_id, input}</code> and Standard Webhooks headers signed with your signing secret; answer 200 with <code>{result}</code>. The provider kit (<code>packages/provider-kit</code>) does this in a few lines.</li>
</ul>
</section>
<div id="action-status" class="status-line" role="status" aria-live="polite" hidden></div>
<form id="onboard-form" novalidate data-max-offers="${MAX_OFFERS}" aria-labelledby="form-heading">
<h2 id="form-heading">Register</h2>
<div id="error-summary" class="error-summary" role="alert" tabindex="-1" hidden>
<h3>Fix these before registering</h3>
<ul></ul>
</div>
<fieldset>
<legend>1. Your wallet</legend>
<p>Connect the wallet (an EIP-1193 browser wallet such as MetaMask) whose address receives your payouts. It only signs a text message: no transaction, no gas.</p>
<p class="actions"><button type="button" id="connect" class="secondary">Connect wallet</button></p>
<p>Payout address: <output id="wallet-address" class="mono">not connected</output></p>
</fieldset>
<fieldset>
<legend>2. Your provider</legend>
${field('name', 'Provider name', 'Shown as the provider of your capabilities in the catalog: letters, digits, space, ".", "_" or "-".', (d) => html`<input type="text" id="name" name="name" autocomplete="organization" aria-describedby="${d}" data-pattern-hint="must start with a letter or digit and use letters, digits, space, &quot;.&quot;, &quot;_&quot; or &quot;-&quot;."${constraints(top.name, registration.required.includes('name'))}>`)}
${field('endpoint', 'Endpoint URL', 'Where the gateway sends POST requests, e.g. https://provider.example/acg.', (d) => html`<input type="url" id="endpoint" name="endpoint" autocomplete="url" spellcheck="false" placeholder="https://provider.example/acg" aria-describedby="${d}"${constraints(top.endpoint, true)}>`)}
</fieldset>
<div id="offers">${offerFieldset(0)}</div>
<template id="offer-template">${offerFieldset('__i__')}</template>
<p class="actions"><button type="button" id="add-offer" class="secondary">Add another capability</button></p>
<fieldset>
<legend>3. Sign and register</legend>
<p>The gateway gives a one-time challenge naming this gateway, your address and a nonce; your wallet signs it (EIP-191 <code>personal_sign</code>) and the registration is sent with the signature. The signing secret for your endpoint is shown once, right after.</p>
<p class="actions"><button type="submit" id="register">Sign and register</button></p>
</fieldset>
</form>
<section id="result" aria-labelledby="result-heading" hidden>
<h2 id="result-heading" tabindex="-1">Registered</h2>
<p>Provider id: <code id="result-id"></code></p>
<h3>Capabilities</h3>
<ul id="result-capabilities"></ul>
<div class="field">
<label for="result-secret">Signing secret: shown once, store it now</label>
<input type="text" id="result-secret" class="mono" readonly aria-describedby="result-secret-hint">
<p id="result-secret-hint" class="hint">Every call to your endpoint carries <code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code> headers signed with it (Standard Webhooks). Verify them before answering.</p>
</div>
<p class="actions"><button type="button" id="copy-secret" class="secondary">Copy the secret</button></p>
<p><a id="result-dashboard" href="/providers/onboard">Open your dashboard</a>: balances, payouts, stats and disputes, after signing in with the same wallet.</p>
</section>`;
  return {
    html: layout({
      title: 'Become a provider',
      description: 'Register an endpoint and capability offers with an EIP-1193 wallet: sign the challenge, get listed, get paid in USDC.',
      current: '/providers/onboard',
      styles: ['account.css'],
      scripts: ['account.js', 'onboard.js'],
      main,
    }),
  };
}

export const providerOnboardPage: WebPage = { template: '/providers/onboard', render };
