import type { WebPage } from '../page.js';
import { capabilityPage } from './capability.js';
import { catalogPage } from './catalog.js';
import { providerDashboardPage } from './providerDashboard.js';
import { providerOnboardPage } from './providerOnboard.js';
import { statusPage } from './status.js';
import { subscriptionPage } from './subscription.js';

/**
 * Every HTML page the gateway serves, by path template (each also enters the route table, which
 * tries templates in this order: `/providers/onboard` before `/providers/{provider_id}`).
 */
export const WEB_PAGES: readonly WebPage[] = [catalogPage, capabilityPage, statusPage, providerOnboardPage, providerDashboardPage, subscriptionPage];
