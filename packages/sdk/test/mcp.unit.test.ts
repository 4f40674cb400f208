import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import {
  GatewayRequestError,
  PaymentTermsMismatchError,
  callPaidTool,
  createGatewayContext,
  readMcpPaymentRequired,
  type McpToolClient,
  type McpToolResult,
  type PaymentPayload,
} from '../src/index.js';
import { BASE, TREASURY, json, paymentRequired, registryDoc, requirement } from './fixtures.js';

/**
 * `callPaidTool` against a scripted MCP client (x402 MCP transport shapes as the gateway's
 * apps/gateway/src/mcp/results.ts writes them). Signing is real (viem, EIP-712).
 */
const account = privateKeyToAccount(generatePrivateKey());
const TOOL = 'intelligence_wallet_balances';
const registryFetch = (async () => json(200, registryDoc())) as typeof fetch;

function paymentRequiredResult(pr = paymentRequired(), reason?: string, structured = true): McpToolResult {
  const data = reason ? { ...pr, reason } : pr;
  return {
    isError: true,
    ...(structured ? { structuredContent: data } : {}),
    content: [{ type: 'text', text: JSON.stringify({ 'x402/error': { code: 402, message: pr.error ?? 'Payment required', data } }) }],
  };
}
const success: McpToolResult = {
  content: [{ type: 'text', text: '{"ok":true}' }],
  structuredContent: { ok: true },
  _meta: { 'x402/payment-response': { success: true } },
};
const problem = (body: Record<string, unknown>): McpToolResult => ({ isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] });

/** An MCP client answering the unpaid call with `first` and the n-th paid call with `paid(n)`. */
function scripted(first: McpToolResult, paid: (n: number) => McpToolResult | Error) {
  const payments: PaymentPayload[] = [];
  const client: McpToolClient = {
    async callTool(params) {
      const payment = params._meta?.['x402/payment'] as PaymentPayload | undefined;
      if (!payment) return first;
      payments.push(payment);
      const r = paid(payments.length - 1);
      if (r instanceof Error) throw r;
      return r;
    },
  };
  return { client, payments };
}

describe('readMcpPaymentRequired', () => {
  it('reads structuredContent, else the x402/error text, and the refusal reason', () => {
    expect(readMcpPaymentRequired(paymentRequiredResult())?.paymentRequired.accepts[0]?.amount).toBe('1000');
    const textOnly = readMcpPaymentRequired(paymentRequiredResult(paymentRequired(), 'insufficient_funds', false));
    expect(textOnly).toMatchObject({ reason: 'insufficient_funds', paymentRequired: { x402Version: 2 } });
    expect(readMcpPaymentRequired(success)).toBeUndefined();
    expect(readMcpPaymentRequired(problem({ status: 400, detail: 'bad' }))).toBeUndefined();
  });
});

describe('callPaidTool', () => {
  it('re-sends the SAME payload after a transport error and counts the payment once', async () => {
    const ctx = createGatewayContext({ baseUrl: BASE, account, fetch: registryFetch });
    const { client, payments } = scripted(paymentRequiredResult(), (n) => (n === 0 ? new Error('socket hang up') : success));
    expect(await callPaidTool(ctx, { client, name: TOOL, arguments: { address: TREASURY } })).toEqual(success);
    expect(payments).toHaveLength(2);
    expect(payments[1]).toEqual(payments[0]);
    expect(payments[0]).toMatchObject({ x402Version: 2, accepted: { amount: '1000', payTo: TREASURY }, payload: { authorization: { from: account.address } } });
    expect(ctx.ledger.totals().baseUnits).toBe(1000n);
  });

  it('counts a payment whose answer never came, as unknown', async () => {
    const ctx = createGatewayContext({ baseUrl: BASE, account, fetch: registryFetch, maxRetries: 1 });
    const { client, payments } = scripted(paymentRequiredResult(), () => new Error('down'));
    const e = await callPaidTool(ctx, { client, name: TOOL }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(GatewayRequestError);
    expect((e as GatewayRequestError).paymentOutcome).toBe('unknown');
    expect(payments).toHaveLength(2);
    expect(ctx.ledger.totals().baseUnits).toBe(1000n);
  });

  it('refuses a requirement that is not the registry terms, before signing', async () => {
    const ctx = createGatewayContext({ baseUrl: BASE, account, fetch: registryFetch });
    const greedy = paymentRequiredResult(paymentRequired([requirement({ amount: '5000' })]));
    const { client, payments } = scripted(greedy, () => success);
    await expect(callPaidTool(ctx, { client, name: TOOL })).rejects.toBeInstanceOf(PaymentTermsMismatchError);
    expect(payments).toHaveLength(0);
  });

  it('releases a tool error before settlement and counts one after it', async () => {
    const ctx = createGatewayContext({ baseUrl: BASE, account, fetch: registryFetch });
    const conflict = problem({ status: 409, reason: 'payment_conflict', detail: 'used for another call' });
    expect(await callPaidTool(ctx, { client: scripted(paymentRequiredResult(), () => conflict).client, name: TOOL })).toEqual(conflict);
    expect(ctx.ledger.totals().baseUnits).toBe(0n);
    const failed = problem({ status: 502, execution_id: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T', refund: { status: 'pending', amount: '1000' } });
    expect(await callPaidTool(ctx, { client: scripted(paymentRequiredResult(), () => failed).client, name: TOOL })).toEqual(failed);
    expect(ctx.ledger.totals().baseUnits).toBe(1000n);
  });
});
