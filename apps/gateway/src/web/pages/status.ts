import { html } from '../html.js';
import { layout } from '../layout.js';
import type { PageContext, PageResult, WebPage } from '../routes.js';
import { operationalBadge } from './components.js';

/** `/status`: the operational status and per-capability state. */
async function render({ services }: PageContext): Promise<PageResult> {
  const health = (await services.discovery.health()).value;
  const main = html`<h1>Status</h1><p>Operational status: ${operationalBadge(health.operational_status)}</p>`;
  return { html: layout({ title: 'Status', current: '/status', main }) };
}

export const statusPage: WebPage = { template: '/status', render };
