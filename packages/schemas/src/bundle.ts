import { z } from 'zod';
import { Address, Hash32, HexData, HexQuantity } from './primitives.js';

/** Most transactions per bundle (docs/decisions.md "Bundle submission", as Flashbots). */
export const MAX_BUNDLE_TXS = 100;
/** Most bytes of signed transactions per bundle (docs/decisions.md "Bundle submission", as Flashbots). */
export const MAX_BUNDLE_BYTES = 300_000;

/**
 * The one params object of `eth_sendBundle` (docs/spec-notes.md 4 + docs/decisions.md "Bundle submission", Flashbots fields): `txs` (1..100
 * signed raw transactions, hex), `blockNumber` (hex quantity of the target block), and optional
 * `minTimestamp`/`maxTimestamp` (UNIX seconds), `revertingTxHashes`, `droppingTxHashes`,
 * `replacementUuid`, `refundPercent` (0..99), `refundRecipient`, `refundTxHashes`.
 */
export const SendBundleParams = z.strictObject({
  txs: z.array(HexData).min(1).max(MAX_BUNDLE_TXS),
  blockNumber: HexQuantity,
  minTimestamp: z.int().nonnegative().optional(),
  maxTimestamp: z.int().nonnegative().optional(),
  revertingTxHashes: z.array(Hash32).optional(),
  droppingTxHashes: z.array(Hash32).optional(),
  replacementUuid: z.uuid().optional(),
  refundPercent: z.int().min(0).max(99).optional(),
  refundRecipient: Address.optional(),
  refundTxHashes: z.array(Hash32).optional(),
});
export type SendBundleParams = z.infer<typeof SendBundleParams>;

/** JSON-RPC 2.0 request `eth_sendBundle` to `{builder_url}/rpc` (docs/spec-notes.md 4): `{jsonrpc: "2.0", method, params: [SendBundleParams], id}`. */
export const SendBundleRequest = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.literal('eth_sendBundle'),
  params: z.tuple([SendBundleParams]),
  id: z.number(),
});
export type SendBundleRequest = z.infer<typeof SendBundleRequest>;

/** Success of `eth_sendBundle`: `{jsonrpc: "2.0", result: null, id}`; null means accepted and queued (docs/spec-notes.md 4). */
export const SendBundleResponse = z.object({
  jsonrpc: z.literal('2.0'),
  result: z.null(),
  id: z.number(),
});
export type SendBundleResponse = z.infer<typeof SendBundleResponse>;
