import { bundleIntakeFor, MAX_BUNDLE_BYTES, MAX_BUNDLE_TXS, RpcError } from '@acg/bundles';
import { Address, Hash32, HexQuantity, SendBundleParams, SendBundleRequest } from '@acg/schemas';
import { parseTransaction, type PublicClient, type TransactionSerialized } from 'viem';
import { z } from 'zod';
import { CapabilityFailure, type CapabilityHandler } from './types.js';

/** Input: the `eth_sendBundle` params object, or the whole JSON-RPC request as the catalog's example shows it. */
export const SendBundleInput = z.union([SendBundleParams, SendBundleRequest]);

/** Output: the JSON-RPC success (`result: null`, SPEC 4) plus the bundle hash, target block and searcher identity. */
export const SendBundleOutput = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.number(), z.string()]).nullable(),
  result: z.null(),
  bundle_hash: Hash32,
  block_number: HexQuantity,
  searcher: Address,
});

const paramsOf = (input: z.output<typeof SendBundleInput>) => ('params' in input ? input.params[0] : input);

/**
 * `builder.send_bundle` through `POST /api/v1/execute` (x402, 0.10 USDC per bundle): the same
 * intake as `eth_sendBundle` on {builder_url}/rpc, with the x402 payer as the searcher identity
 * (replacement and cancellation by `replacementUuid` are scoped to it) and the bundle recorded as paid.
 *
 * Before payment (`precondition`, 422, nothing charged): the Ethereum chain and Redis are configured,
 * at most 100 txs and 300,000 bytes, every tx decodes and carries the chain's id.
 * After payment (`run`; a failure is refunded): the sender of each tx is recovered and the target
 * block checked against the head (`invalid_bundle`, 422), then the bundle is queued.
 */
export const sendBundle: CapabilityHandler<typeof SendBundleInput, typeof SendBundleOutput> = {
  id: 'builder.send_bundle',
  input: SendBundleInput,
  output: SendBundleOutput,
  precondition(input, deps) {
    const client = deps.chainClient('ethereum');
    if (!client || !deps.redis || !deps.keys) return 'Bundle submission needs the Ethereum chain (ETHEREUM_RPC_URL) and Redis configured on this gateway.';
    const params = paramsOf(input);
    if (params.txs.length > MAX_BUNDLE_TXS) return `txs: at most ${MAX_BUNDLE_TXS} transactions per bundle.`;
    const bytes = params.txs.reduce((a, t) => a + (t.length - 2) / 2, 0);
    if (bytes > MAX_BUNDLE_BYTES) return `txs: the bundle is ${bytes} bytes; at most ${MAX_BUNDLE_BYTES}.`;
    const chainId = client.chain?.id;
    for (const [i, raw] of params.txs.entries()) {
      let tx;
      try {
        tx = parseTransaction(raw as TransactionSerialized);
      } catch {
        return `txs[${i}]: not a decodable signed transaction.`;
      }
      if (chainId !== undefined && tx.chainId !== chainId) return `txs[${i}]: chain id ${tx.chainId ?? 'missing'} is not Ethereum's (${chainId}).`;
    }
    return undefined;
  },
  async run(input, deps, call) {
    const client = deps.chainClient('ethereum') as PublicClient;
    if (!call || !deps.redis || !deps.keys) throw new CapabilityFailure('not_configured', 'Bundle submission is not configured on this gateway.', 503);
    // after payment, validate against the node's head as it is now (no head watcher runs in the gateway process)
    const intake = bundleIntakeFor({ redis: deps.redis, keys: deps.keys, client, headMaxAgeMs: 0 });
    try {
      const res = await intake.submit(call.payer as `0x${string}`, paramsOf(input) as Record<string, unknown>, {
        kind: 'x402',
        executionId: call.executionId,
        paymentTxHash: call.paymentTxHash as `0x${string}`,
      });
      return {
        jsonrpc: '2.0' as const,
        id: 'params' in input ? input.id : null,
        result: null,
        bundle_hash: res.bundleHash,
        block_number: `0x${res.blockNumber.toString(16)}`,
        searcher: res.searcher,
      };
    } catch (e) {
      if (e instanceof RpcError) throw new CapabilityFailure('invalid_bundle', e.shortMessage, 422, e);
      throw new CapabilityFailure('chain_unavailable', 'Could not queue the bundle: the Ethereum node or Redis did not answer.', 503, e);
    }
  },
};
