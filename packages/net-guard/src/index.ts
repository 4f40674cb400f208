/**
 * @acg/net-guard: the rules for every URL the service calls on someone else's behalf (webhook
 * URLs, provider endpoints) against SSRF, with address classes from ipaddr.js (packages/net-guard/README.md).
 */
export { WebhookUrlError } from './errors.js';
export * from './urlGuard.js';
export { webhookPolicyFromEnv } from './policyFromEnv.js';
