import { HttpRequestError, TimeoutError, ContractFunctionExecutionError, BaseError } from 'viem';
import { describe, expect, it } from 'vitest';
import { authorizationWindowProblem } from '../src/authorizationWindow.js';
import { isTransportError, PaymentChainMonitor } from '../src/chainHealth.js';

describe('authorizationWindowProblem', () => {
  const now = 1_700_000_000;
  const at = (validAfter: number, validBefore: number) =>
    authorizationWindowProblem({ validAfter: String(validAfter), validBefore: String(validBefore) }, 300, { nowSeconds: now });
  it('accepts what the official client signs (validAfter 0 or in the past, validBefore = its now + maxTimeoutSeconds), also from a payer 45 s ahead', () => {
    expect(at(0, now + 300)).toBeUndefined();
    expect(at(now - 600, now + 300)).toBeUndefined();
    expect(at(0, now + 45 + 300)).toBeUndefined(); // the gateway's clock 45 s behind its payer's (issue 33)
    expect(at(0, now + 120 + 300)).toBeUndefined(); // up to DEFAULT_CLOCK_SKEW_SECONDS
  });
  it('refuses validBefore beyond maxTimeoutSeconds + skew, and validAfter in the future exactly as the facilitator does', () => {
    expect(at(now - 600, now + 421)).toBe('authorization_validity_too_long');
    expect(at(0, now + 365 * 24 * 3600)).toBe('authorization_validity_too_long');
    expect(at(now + 1, now + 300)).toBe('invalid_exact_evm_payload_authorization_valid_after');
    expect(at(now, now + 300)).toBeUndefined();
  });
});

describe('isTransportError', () => {
  it('recognises unreachable-node errors, also wrapped', () => {
    expect(isTransportError(new HttpRequestError({ url: 'http://127.0.0.1:1', details: 'fetch failed' }))).toBe(true);
    expect(isTransportError(new TimeoutError({ body: {}, url: 'http://127.0.0.1:1' }))).toBe(true);
    expect(isTransportError(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isTransportError(new TypeError('fetch failed'))).toBe(true);
    const wrapped = new ContractFunctionExecutionError(new HttpRequestError({ url: 'http://x', details: 'fetch failed' }) as BaseError, {
      abi: [],
      functionName: 'f',
    });
    expect(isTransportError(wrapped)).toBe(true);
  });
  it('does not mistake a revert or a bad signature for an outage', () => {
    expect(isTransportError(new BaseError('execution reverted: FiatTokenV2: invalid signature'))).toBe(false);
    expect(isTransportError(new Error('invalid signature'))).toBe(false);
    expect(isTransportError(undefined)).toBe(false);
  });
});

describe('PaymentChainMonitor.broadcastSince', () => {
  it('records a transaction handed to the node even when the node never answers, and nothing for reads', async () => {
    // a port nothing listens on: every request fails with a transport error
    const monitor = new PaymentChainMonitor('http://127.0.0.1:9', 1_000);
    const request = monitor.transport({ retryCount: 0 })({}).request as (a: { method: string; params?: unknown[] }) => Promise<unknown>;
    const since = Date.now();
    await expect(request({ method: 'eth_call', params: [{ to: `0x${'1'.repeat(40)}`, data: '0x' }, 'latest'] })).rejects.toThrow();
    expect(monitor.broadcastSince(since)).toBe(false);
    expect(monitor.failedSince(since)).toBe(true);
    await expect(request({ method: 'eth_sendRawTransaction', params: ['0x02'] })).rejects.toThrow();
    expect(monitor.broadcastSince(since)).toBe(true);
    expect(monitor.broadcastSince(Date.now() + 1)).toBe(false);
  });
});
