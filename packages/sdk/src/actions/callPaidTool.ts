import { findByMcpToolName, mcpToolName as toolNameOf } from '@acg/schemas/mcpToolName';
import { chooseRequirement, registryTerms, type ChooseRequirementReturnType, type PaymentTerms } from '../chooseRequirement.js';
import type { GatewayContext } from '../context.js';
import {
  GatewayRequestError,
  PaymentRequiredError,
  PaymentTermsMismatchError,
  UnknownCapabilityError,
  type AcgError,
  type SpendLimitExceededError,
} from '../errors.js';
import { signPaymentPayload } from '../payAndRetry.js';
import { parseJson, readPaymentRequired } from '../protocol.js';
import type { Capability, PaymentPayload, PaymentRequired } from '../types.js';
import { sleep } from './internal.js';

/**
 * x402 over MCP for agents (x402 `specs/transports-v2/mcp.md`; the gateway's `POST /mcp`, docs/decisions.md
 * "Agents: MCP and x402 extensions"): call a tool with an MCP client, and when the tool answers
 * `isError` with a `PaymentRequired`, pay it with the SDK's payment code (the terms `/registry`
 * advertises, the spend limits, the official x402 client) and call again with the PaymentPayload
 * in `_meta["x402/payment"]`. The SDK does not depend on `@modelcontextprotocol/sdk`: any object
 * with its `Client.callTool` shape works ({@link McpToolClient}).
 */

/** `_meta` key of the PaymentPayload sent with a paid tool call (x402 MCP transport). */
export const MCP_PAYMENT_META = 'x402/payment';
/** `_meta` key of the settlement (`{success, transaction, network, payer}`) on a paid tool result. */
export const MCP_PAYMENT_RESPONSE_META = 'x402/payment-response';

/** A tool result as MCP's `CallToolResult` has it (only what the SDK reads is typed). */
export interface McpToolResult {
  [key: string]: unknown;
  /** `[{type: "text", text}]`; a PaymentRequired also comes as `{"x402/error": {code: 402, message, data}}` text. */
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  /** On a paid success: `x402/payment-response`, and from this gateway `capability_id`, `execution_id`, `payment`, `proof`. */
  _meta?: unknown;
}

/**
 * What the SDK needs of an MCP client: `callTool` with the signature of `@modelcontextprotocol/sdk`'s
 * `Client.callTool(params, resultSchema?, options?)`. Pass a connected `Client` (e.g. with a
 * `StreamableHTTPClientTransport` to `{base_url}/mcp`).
 */
export interface McpToolClient {
  callTool(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    resultSchema?: unknown,
    options?: { signal?: AbortSignal },
  ): Promise<McpToolResult>;
}

/** Parameters of {@link callPaidTool}. */
export interface CallPaidToolParameters {
  /** A connected MCP client (structural; e.g. `@modelcontextprotocol/sdk` `Client`). */
  client: McpToolClient;
  /** Tool name, e.g. `intelligence_wallet_balances` (the capability id with `.` → `_`). */
  name: string;
  /** Tool arguments: the capability's input. */
  arguments?: Record<string, unknown>;
  /** Extra `_meta` sent with both calls (e.g. a progress token); `x402/payment` is set by the SDK. */
  _meta?: Record<string, unknown>;
  /** Aborts the MCP requests. An abort after a signed payment was sent counts it as spent. */
  signal?: AbortSignal;
  /**
   * Terms the payment must meet (amounts in integer USDC base units). Default: the x402 terms
   * `/registry` advertises for the capability whose tool is `name` (network, asset, payTo, price
   * ceiling); the registry is read again once on a mismatch.
   */
  terms?: PaymentTerms;
}

/** What {@link callPaidTool} returns: the MCP tool result of the last call, as the MCP client gave it. */
export type CallPaidToolReturnType = McpToolResult;

/** Errors of {@link callPaidTool}. */
export type CallPaidToolErrorType =
  | PaymentRequiredError
  | PaymentTermsMismatchError
  | SpendLimitExceededError
  | UnknownCapabilityError
  | GatewayRequestError
  | AcgError;

/**
 * MCP tool name of a capability id: dots become `_` (`intelligence.wallet_balances` →
 * `intelligence_wallet_balances`). The gateway's own mapping (`@acg/schemas/mcpToolName`, bundled
 * into this package's build), so the SDK and the gateway cannot disagree.
 */
export function mcpToolName(capabilityId: string): string {
  return toolNameOf(capabilityId);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/** The JSON of a tool result's first text content, if it is JSON. */
function firstTextJson(result: McpToolResult): unknown {
  const first = Array.isArray(result.content) ? result.content[0] : undefined;
  return isObject(first) && first.type === 'text' && typeof first.text === 'string' ? parseJson(first.text) : undefined;
}

/**
 * The x402 PaymentRequired of an MCP tool result, where x402's MCP transport puts it: an
 * `isError` result whose `structuredContent` is the PaymentRequired, else whose `content[0].text`
 * is `{"x402/error": {code: 402, data: PaymentRequired}}`. `reason` is set when the server
 * refused a payment that was sent (the gateway adds it to the PaymentRequired). Undefined for any
 * other result.
 */
export function readMcpPaymentRequired(result: McpToolResult): { paymentRequired: PaymentRequired; reason?: string } | undefined {
  if (!result.isError) return undefined;
  let data: unknown = result.structuredContent;
  let pr = readPaymentRequired(undefined, data);
  if (!pr) {
    const err = (firstTextJson(result) as { 'x402/error'?: { code?: unknown; data?: unknown } } | undefined)?.['x402/error'];
    if (isObject(err) && err.code === 402) {
      data = err.data;
      pr = readPaymentRequired(undefined, data);
    }
  }
  if (!pr) return undefined;
  const reason = isObject(data) && typeof data.reason === 'string' ? data.reason : undefined;
  return { paymentRequired: pr, ...(reason ? { reason } : {}) };
}

/** The RFC 9457 problem a tool error carries as its text (this gateway's tool errors), if any. */
function problemOf(result: McpToolResult): Record<string, unknown> | undefined {
  const body = firstTextJson(result);
  return isObject(body) && typeof body.status === 'number' ? body : undefined;
}

/** A tool error after which the same payment may be sent again: payment still in progress, or verification unavailable. */
function replayable(result: McpToolResult): boolean {
  const p = result.isError ? problemOf(result) : undefined;
  if (!p || p.execution_id !== undefined || p.refund !== undefined) return false;
  return (p.status === 409 && p.reason === 'payment_in_progress') || p.status === 503;
}

async function capabilityOfTool(ctx: GatewayContext, name: string): Promise<Capability> {
  const find = (caps: Capability[]) => findByMcpToolName(caps, name);
  const found = find((await ctx.registry.get()).capabilities);
  if (found) return found;
  const caps = (await ctx.registry.get({ refresh: true })).capabilities;
  const again = find(caps);
  if (!again) throw new UnknownCapabilityError(name, { available: caps.map((c) => mcpToolName(c.id)) });
  return again;
}

/**
 * Calls an MCP tool and pays its x402 challenge if it answers with one.
 *
 * 1. Calls the tool. A result that is not an `isError` PaymentRequired is returned as is (free
 *    tools, tool errors such as a 400 problem for bad arguments): nothing paid.
 * 2. On a PaymentRequired: without `ctx.account` throws {@link PaymentRequiredError}. Otherwise
 *    picks a requirement with {@link chooseRequirement} against `terms` (default: `/registry`'s
 *    terms for the capability of the tool) and reserves it in the spend ledger. Nothing is signed
 *    before this point.
 * 3. Signs one PaymentPayload with the official x402 client and calls the tool again with it in
 *    `_meta["x402/payment"]`. After a thrown error (transport), or a 409 `payment_in_progress` /
 *    503 tool error, it sends the SAME payload again (after 1 s), at most `ctx.maxRetries` times:
 *    the gateway runs one payment once, so this never pays twice.
 * 4. Accounting, as {@link payAndRetry}: a success is counted; a refused payment (PaymentRequired
 *    with `reason`) is released and thrown as {@link PaymentRequiredError}; a tool error naming an
 *    `execution_id` or `refund`, a 5xx, or a 409 still in progress is counted (refunded later by
 *    the gateway when it failed); any other tool error is released and returned.
 *
 * @returns the last tool result: on success `structuredContent` is the capability's result and
 *   `_meta["x402/payment-response"]` the settlement (`{success, transaction, network, payer}`).
 * @throws {PaymentRequiredError} {PaymentTermsMismatchError} {SpendLimitExceededError} {UnknownCapabilityError} (no capability for the tool in /registry)
 * @throws {GatewayRequestError} `paymentOutcome: "unknown"` when no answer came after a signed payment.
 *
 * @example
 * const result = await callPaidTool(ctx, { client: mcp, name: 'intelligence_wallet_balances', arguments: { address } })
 * console.log(result.structuredContent, result._meta?.['x402/payment-response'])
 */
export async function callPaidTool(ctx: GatewayContext, p: CallPaidToolParameters): Promise<CallPaidToolReturnType> {
  const { client, name, signal } = p;
  const call = (meta?: Record<string, unknown>) =>
    client.callTool({ name, ...(p.arguments ? { arguments: p.arguments } : {}), ...(meta ? { _meta: meta } : {}) }, undefined, signal ? { signal } : undefined);

  const first = await call(p._meta);
  const challenge = readMcpPaymentRequired(first);
  if (!challenge) return first;
  const pr = challenge.paymentRequired;

  const capability = p.terms ? undefined : await capabilityOfTool(ctx, name);
  const label = capability?.id ?? name;
  if (!ctx.account) throw new PaymentRequiredError(label, pr, { challenge: isObject(first.structuredContent) ? first.structuredContent : undefined });

  const choose = (terms: PaymentTerms | undefined): ChooseRequirementReturnType =>
    chooseRequirement({ paymentRequired: pr, network: ctx.network, assets: ctx.assets, ledger: ctx.ledger, label, terms });
  let chosen: ChooseRequirementReturnType;
  try {
    chosen = choose(p.terms ?? registryTerms(capability!));
  } catch (e) {
    if (!(e instanceof PaymentTermsMismatchError) || p.terms) throw e;
    // the gateway may have changed its terms since /registry was read: check once more
    chosen = choose(registryTerms(await ctx.registry.capability(capability!.id, { refresh: true })));
  }
  const { requirement, amount } = chosen;
  const reservation = ctx.ledger.reserve(amount, label);
  let payload: PaymentPayload;
  try {
    payload = await signPaymentPayload(ctx.account, pr, requirement, amount);
  } catch (e) {
    reservation.release();
    throw e;
  }

  const paidMeta = { ...p._meta, [MCP_PAYMENT_META]: payload };
  let result: McpToolResult;
  for (let attempt = 0; ; attempt++) {
    try {
      result = await call(paidMeta);
    } catch (e) {
      if (attempt < ctx.maxRetries && !signal?.aborted) continue;
      reservation.commit(); // the gateway may have settled it: keep it counted
      throw new GatewayRequestError(`${ctx.baseUrl}/mcp`, `No answer to the MCP tool call "${name}" after sending a signed payment.`, {
        cause: e,
        paymentOutcome: 'unknown',
      });
    }
    if (replayable(result) && attempt < ctx.maxRetries && !signal?.aborted) {
      await sleep(1000);
      continue;
    }
    break;
  }

  if (!result.isError) {
    reservation.commit();
    return result;
  }
  const refusal = readMcpPaymentRequired(result);
  if (refusal) {
    reservation.release(); // refused before settlement: nothing charged
    throw new PaymentRequiredError(label, refusal.paymentRequired, {
      challenge: isObject(result.structuredContent) ? result.structuredContent : undefined,
      reason: refusal.reason,
      refused: true,
    });
  }
  const problem = problemOf(result);
  const status = typeof problem?.status === 'number' ? problem.status : undefined;
  const charged =
    !problem || // an unexplained error after paying: count it (the SDK may count too much, never too little)
    (status !== undefined && status >= 500) ||
    (status === 409 && problem.reason === 'payment_in_progress') ||
    problem.execution_id !== undefined ||
    problem.refund !== undefined;
  if (charged) reservation.commit();
  else reservation.release();
  return result;
}
