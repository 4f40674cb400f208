import type { UrlPolicy } from './urlGuard.js';

/**
 * The {@link UrlPolicy} from the environment, for webhook URLs and provider endpoints alike:
 * `WEBHOOK_POLICY` (`production` | `development`) when set; else `NODE_ENV=production` →
 * production, `NODE_ENV=development|test` → development; else `fallback` (default `production`:
 * a deployment that says nothing gets the SSRF-safe rules; the embedded dev launcher passes
 * `development`). README "Outbound URL rules" of packages/wallet-monitor.
 *
 * @throws {Error} `WEBHOOK_POLICY must be production or development` for any other value.
 */
export function webhookPolicyFromEnv(env: NodeJS.ProcessEnv, fallback: UrlPolicy = 'production'): UrlPolicy {
  const explicit = env.WEBHOOK_POLICY;
  if (explicit === 'production' || explicit === 'development') return explicit;
  if (explicit) throw new Error('WEBHOOK_POLICY must be production or development');
  if (env.NODE_ENV === 'production') return 'production';
  if (env.NODE_ENV === 'development' || env.NODE_ENV === 'test') return 'development';
  return fallback;
}
