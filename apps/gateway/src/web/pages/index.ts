import type { WebPage } from '../routes.js';
import { capabilityPage } from './capability.js';
import { catalogPage } from './catalog.js';
import { statusPage } from './status.js';

/** Every HTML page the gateway serves, by path template (each also enters the route table). */
export const WEB_PAGES: readonly WebPage[] = [catalogPage, capabilityPage, statusPage];
