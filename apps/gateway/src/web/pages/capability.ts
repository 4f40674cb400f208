import { html } from '../html.js';
import { layout } from '../layout.js';
import type { PageContext, PageResult, WebPage } from '../routes.js';
import { notFoundPage } from './notFound.js';
import { statusBadge } from './components.js';

/** `/capabilities/{capability_id}`: one capability of `/registry`; an unknown id is the HTML 404 page. */
async function render({ services, params }: PageContext): Promise<PageResult> {
  const id = params.capability_id ?? '';
  const registry = await services.discovery.registry();
  const c = registry.value.capabilities.find((x) => x.id === id);
  if (!c) return { status: 404, html: notFoundPage(`/capabilities/${id}`, 'capability') };
  const main = html`<h1>${c.name}</h1><p><code>${c.id}</code> ${statusBadge(c.status)}</p>${c.description ? html`<p>${c.description}</p>` : ''}`;
  return { html: layout({ title: c.name, description: c.description, current: '/', main }) };
}

export const capabilityPage: WebPage = { template: '/capabilities/{capability_id}', render };
