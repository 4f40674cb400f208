import jayson from 'jayson';
import type { BuilderMetrics } from '@acg/observability';
import type { Logger } from 'pino';
import type { Address, Hex, PublicClient } from 'viem';
import type { BundleIntake } from '@acg/bundles';
import type { RpcContext } from './context.js';
import { ProblemError } from '@acg/schemas';
import { internalError, jsonRpcErrorOf, type JsonRpcErrorObject } from './errors.js';
import { eth_callBundle } from './eth_callBundle.js';
import { eth_cancelBundle } from './eth_cancelBundle.js';
import { eth_sendBundle } from './eth_sendBundle.js';
import { flashbots_getBundleStatsV2 } from './flashbots_getBundleStatsV2.js';
import { mev_sendBundle } from './mev_sendBundle.js';
import { buildernet_getDelayedRefunds } from './buildernet_getDelayedRefunds.js';
import { buildernet_getDelayedRefundTotalsByRecipient } from './buildernet_getDelayedRefundTotalsByRecipient.js';
import { buildernet_getFeeRefundsByBundle } from './buildernet_getFeeRefundsByBundle.js';
import { buildernet_getFeeRefundsByRecipient } from './buildernet_getFeeRefundsByRecipient.js';
import { buildernet_getFeeRefundTotalsByRecipient } from './buildernet_getFeeRefundTotalsByRecipient.js';
import { eth_sendEndOfBlockBundle } from './eth_sendEndOfBlockBundle.js';

/** What the JSON-RPC methods use. */
export interface RpcDeps {
  intake: BundleIntake;
  client: PublicClient;
  feeRecipient: Address;
  /** The builder's BLS public key (`consideredByBuildersAt` / `sealedByBuildersAt` of `flashbots_getBundleStatsV2`). */
  blsPublicKey: Hex;
  log: Logger;
  /** Told of each bundle `eth_sendBundle` or `mev_sendBundle` queued (`acg_builder_bundles_received_total`). */
  metrics?: Pick<BuilderMetrics, 'bundleReceived'>;
}

/** The methods served on `/rpc`, one file each (docs/code-style.md). */
export const RPC_METHODS = [
  'eth_sendBundle',
  'eth_cancelBundle',
  'eth_callBundle',
  'mev_sendBundle',
  'flashbots_getBundleStatsV2',
  'eth_sendEndOfBlockBundle',
  'buildernet_getFeeRefundTotalsByRecipient',
  'buildernet_getFeeRefundsByRecipient',
  'buildernet_getFeeRefundsByBundle',
  'buildernet_getDelayedRefunds',
  'buildernet_getDelayedRefundTotalsByRecipient',
] as const;

/**
 * The JSON-RPC edge of a method's failure, the one place it is mapped (docs/architecture.md
 * "Errors"): a `ProblemError` (every `RpcError` of @acg/bundles, any other problem) →
 * `jsonRpcErrorOf`; anything else is a bug, logged, and answered as -32603 without its text.
 */
function toJsonRpcError(e: unknown, log: Logger, method: string): JsonRpcErrorObject {
  if (e instanceof ProblemError) return jsonRpcErrorOf(e);
  log.error({ method, err: e }, 'JSON-RPC method failed');
  return jsonRpcErrorOf(internalError('Internal error; it was logged.'));
}

type Handler = (params: unknown, ctx: RpcContext) => Promise<unknown>;

/**
 * The jayson 5 server with the builder's methods (context-aware: each gets the {@link RpcContext}
 * the HTTP route built). The route calls `server.call(parsedBody, context, cb)` itself (docs/pitfalls.md: jayson's middleware forces status codes and passes no context).
 */
export function createRpcServer(deps: RpcDeps): jayson.Server {
  const wrap = (name: string, fn: Handler) => (params: unknown, context: object, callback: (err: JsonRpcErrorObject | null, result?: unknown) => void) => {
    fn(params, context as RpcContext).then(
      (result) => callback(null, result),
      (e) => callback(toJsonRpcError(e, deps.log, name)),
    );
  };
  const refundDeps = { refunds: deps.intake.pool.refunds, client: deps.client };
  const methods: Record<(typeof RPC_METHODS)[number], Handler> = {
    eth_sendBundle: async (p, c) => {
      const result = await eth_sendBundle(deps.intake, p, c);
      deps.metrics?.bundleReceived();
      return result;
    },
    eth_cancelBundle: (p, c) => eth_cancelBundle(deps.intake, p, c),
    eth_callBundle: (p, c) => eth_callBundle(deps, p, c),
    mev_sendBundle: async (p, c) => {
      const result = await mev_sendBundle(deps.intake, p, c);
      deps.metrics?.bundleReceived();
      return result;
    },
    flashbots_getBundleStatsV2: (p, c) =>
      flashbots_getBundleStatsV2({ stats: deps.intake.pool.stats, client: deps.client, blsPublicKey: deps.blsPublicKey }, p, c),
    eth_sendEndOfBlockBundle: async (p, c) => {
      const result = await eth_sendEndOfBlockBundle(deps.intake, p, c);
      deps.metrics?.bundleReceived();
      return result;
    },
    buildernet_getFeeRefundTotalsByRecipient: (p, c) => buildernet_getFeeRefundTotalsByRecipient(refundDeps, p, c),
    buildernet_getFeeRefundsByRecipient: (p, c) => buildernet_getFeeRefundsByRecipient(refundDeps, p, c),
    buildernet_getFeeRefundsByBundle: (p, c) => buildernet_getFeeRefundsByBundle(refundDeps, p, c),
    buildernet_getDelayedRefunds: (p, c) => buildernet_getDelayedRefunds(refundDeps, p, c),
    buildernet_getDelayedRefundTotalsByRecipient: (p, c) => buildernet_getDelayedRefundTotalsByRecipient(refundDeps, p, c),
  };
  return new jayson.Server(Object.fromEntries(Object.entries(methods).map(([name, fn]) => [name, wrap(name, fn)])) as never, { useContext: true, version: 2 });
}
