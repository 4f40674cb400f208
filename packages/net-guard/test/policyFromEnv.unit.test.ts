import { describe, expect, it } from 'vitest';
import { webhookPolicyFromEnv } from '../src/index.js';

describe('webhookPolicyFromEnv', () => {
  it('picks the webhook policy from the environment, production unless told otherwise', () => {
    expect(webhookPolicyFromEnv({})).toBe('production');
    expect(webhookPolicyFromEnv({ NODE_ENV: 'test' })).toBe('development');
    expect(webhookPolicyFromEnv({ NODE_ENV: 'production' }, 'development')).toBe('production');
    expect(webhookPolicyFromEnv({ WEBHOOK_POLICY: 'development', NODE_ENV: 'production' })).toBe('development');
    expect(webhookPolicyFromEnv({}, 'development')).toBe('development');
    expect(() => webhookPolicyFromEnv({ WEBHOOK_POLICY: 'lax' })).toThrow();
  });
});
