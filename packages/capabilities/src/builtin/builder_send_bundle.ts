import { bundleIntakeFor, MAX_BUNDLE_BYTES, MAX_BUNDLE_TXS, RpcError } from '@acg/bundles';
import { Address, Hash32, HexQuantity, SendBundleParams, SendBundleRequest } from '@acg/schemas';
import { parseTransaction, type PublicClient, type TransactionSerialized } from 'viem';
import { z } from 'zod';
import { CapabilityFailure, defineCapability } from '../define.js';

/** Input: the `eth_sendBundle` params object, or the whole JSON-RPC request as the catalog's example shows it. */
export const SendBundleInput = z.union([SendBundleParams, SendBundleRequest]);

/** Output: the JSON-RPC success (`result: null`, docs/spec-notes.md 4) plus the bundle hash, target block and searcher identity. */
export const SendBundleOutput = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.number().nullable(),
  result: z.null(),
  bundle_hash: Hash32,
  block_number: HexQuantity,
  searcher: Address,
});

/** `{txs (≤ 100 signed txs, ≤ 300,000 bytes), blockNumber (hex), ...Flashbots fields}`, or the whole JSON-RPC request. */
export type SendBundleParameters = z.input<typeof SendBundleInput>;
/** `{jsonrpc, id, result: null, bundle_hash, block_number (hex), searcher}`; the searcher is the x402 payer. */
export type SendBundleReturnType = z.infer<typeof SendBundleOutput>;
/** `invalid_bundle` (422), `chain_unavailable` / `not_configured` (503); every one refunded. */
export type SendBundleErrorType = CapabilityFailure;

const paramsOf = (input: z.output<typeof SendBundleInput>) => ('params' in input ? input.params[0] : input);

/**
 * `builder.send_bundle`, 0.10 USDC (100000 base units) per bundle: the same intake as
 * `eth_sendBundle` on {builder_url}/rpc (`@acg/bundles`), and through `POST /api/v1/execute` with
 * the x402 payer as the searcher identity (replacement and cancellation by `replacementUuid` are
 * scoped to it) and the bundle recorded as paid.
 *
 * Before payment (`precondition`, 422, nothing charged): the Ethereum chain and Redis are configured,
 * at most 100 txs and 300,000 bytes, every tx decodes and carries the chain's id.
 * After payment (`run`; a failure is refunded): the sender of each tx is recovered and the target
 * block checked against the head (`invalid_bundle`, 422), then the bundle is queued.
 *
 * @example
 * // POST {base_url}/api/v1/execute
 * { "capability_id": "builder.send_bundle", "input": { "txs": ["0x02f8…"], "blockNumber": "0x1361bd3" } }
 * // → result { "jsonrpc": "2.0", "id": null, "result": null, "bundle_hash": "0x…", "block_number": "0x1361bd3", "searcher": "0x…" }
 */
export const sendBundle = defineCapability({
  id: 'builder.send_bundle',
  product: 'builder',
  name: 'Bundle submission',
  description: 'Accepts Ethereum bundles over JSON-RPC eth_sendBundle for block construction; bids are submitted to four relays under an always-submit policy.',
  surface: 'JSON-RPC',
  auth: 'bundle_signature',
  method: 'POST',
  endpoint: '{builder_url}/rpc',
  docs: null,
  built: true,
  x402: 'accepted',
  price: { base_units: 100_000n, unit: 'bundle' },
  input: SendBundleInput,
  output: SendBundleOutput,
  example: {
    request: {
      jsonrpc: '2.0',
      method: 'eth_sendBundle',
      params: [{ txs: ['0x02f8b1'], blockNumber: '0x1361bd3' }],
      id: 1,
    },
    // /rpc answers {jsonrpc, result: null, id}; through /api/v1/execute the result also names the bundle and its searcher
    response: {
      jsonrpc: '2.0',
      result: null,
      id: 1,
      bundle_hash: '0x3f0e6cbb8d1c1c5c7a5b2d1f9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f00',
      block_number: '0x1361bd3',
      searcher: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    },
  },
  notes:
    'Header X-Bundle-Signature: <address>:<signature> (EIP-191 over the keccak256 of the body). Settled out-of-band; ' +
    'Spec target latency about 420 ms p50 and 1200 ms p99. Rate limit 10 requests/s per IP, burst 20.',
  precondition(input, deps) {
    const client = deps.chainClient('ethereum');
    if (!client || !deps.redis || !deps.keys) return 'Bundle submission needs the Ethereum chain (ETHEREUM_RPC_URL) and Redis configured on this gateway.';
    const params = paramsOf(input);
    if (params.txs.length > MAX_BUNDLE_TXS) return `txs: at most ${MAX_BUNDLE_TXS} transactions per bundle.`;
    const bytes = params.txs.reduce((a, t) => a + (t.length - 2) / 2, 0);
    if (bytes > MAX_BUNDLE_BYTES) return `txs: the bundle is ${bytes} bytes; at most ${MAX_BUNDLE_BYTES}.`;
    const chainId = client.chain?.id;
    for (const [i, raw] of params.txs.entries()) {
      let tx: ReturnType<typeof parseTransaction>;
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
});
