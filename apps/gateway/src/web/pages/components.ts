import { gatewayExecute, gatewayJobs } from '@acg/capabilities';
import type { CapabilityStatus, HealthStatus } from '@acg/schemas';
import { html, type SafeHtml } from '../html.js';

type Tone = 'ok' | 'warn' | 'bad' | 'info' | 'idle';

const CAPABILITY_TONE: Record<CapabilityStatus, Tone> = { LIVE: 'ok', PILOT: 'info', PARTIAL: 'warn', STALE: 'bad', PLANNED: 'idle' };
const HEALTH_TONE: Record<HealthStatus, Tone> = { up: 'ok', degraded: 'warn', down: 'bad', planned: 'idle' };
const OPERATIONAL_TONE: Record<string, Tone> = { ok: 'ok', degraded: 'warn', outage: 'bad' };

/** A catalog status (`LIVE`, `PILOT`, ...) as a coloured badge; the text is the status itself, so colour is never the only cue. */
export function statusBadge(status: CapabilityStatus): SafeHtml {
  return html`<span class="badge badge-${CAPABILITY_TONE[status] ?? 'idle'}" data-status="${status}">${status}</span>`;
}

/** A health status (`up`, `degraded`, `down`, `planned`) as a badge. */
export function healthBadge(status: HealthStatus): SafeHtml {
  return html`<span class="badge badge-${HEALTH_TONE[status] ?? 'idle'}" data-health="${status}">${status}</span>`;
}

/** The rolled-up operational status (`ok`, `degraded`, `outage`) as a badge. */
export function operationalBadge(status: string): SafeHtml {
  return html`<span class="badge badge-${OPERATIONAL_TONE[status] ?? 'warn'}" data-operational="${status}">${status.replace(/_/g, ' ')}</span>`;
}

/** Milliseconds for people: `12.3 ms`, `1.20 s`, or an em dash when not measured yet. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  return `${ms.toFixed(1)} ms`;
}

/** A `<time>` with the machine value and a readable UTC text, or an em dash. */
export function timeTag(iso: string | null | undefined): SafeHtml {
  if (!iso) return html`—`;
  const text = iso
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z')
    .replace('Z', ' UTC');
  return html`<time datetime="${iso}">${text}</time>`;
}

/** A price for people: `0.001 USDC per call`, `free`, or what decides it when it is not fixed. */
export function priceText(c: { id: string; price: string | null; price_unit: string | null; x402: unknown }): string {
  if (c.price === null) {
    if (c.id === gatewayExecute.id) return 'price of the capability executed';
    if (c.id === gatewayJobs.id) return 'the job budget';
    return c.x402 ? 'set by the request' : 'no published price';
  }
  if (Number(c.price) === 0) return 'free';
  return `${c.price} USDC per ${c.price_unit ?? 'call'}`;
}
