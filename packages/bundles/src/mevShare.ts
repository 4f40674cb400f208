import { getAddress, isAddress, type Hash } from 'viem';
import { decodeBundleTxSync, MAX_BUNDLE_BYTES, MAX_BUNDLE_TXS, targetBlock, type BundleTx, type ValidBundleParams } from './bundle.js';
import { invalidParams } from './errors.js';

/** The MEV-Share bundle version served (`version` of `mev_sendBundle`). */
export const MEV_SHARE_VERSION = 'v0.1';
/** Most blocks one `mev_sendBundle` may span: `inclusion.maxBlock - inclusion.block` (the MEV-Share limit). */
export const MAX_MEV_BLOCK_RANGE = 30n;
/** The privacy hints MEV-Share defines (accepted; this builder shares nothing with anyone). */
export const MEV_SHARE_HINTS = ['calldata', 'contract_address', 'logs', 'function_selector', 'hash', 'tx_hash', 'full', 'default_logs'] as const;

/** A validated `mev_sendBundle`: the bundle in eth_sendBundle terms for `inclusion.block`, and the last block it may land in. */
export interface ValidMevBundle {
  bundle: ValidBundleParams;
  /** `inclusion.maxBlock`, or `inclusion.block` when absent. */
  maxBlock: bigint;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function onlyFields(obj: Record<string, unknown>, where: string, allowed: readonly string[]): void {
  for (const key of Object.keys(obj)) if (!allowed.includes(key)) throw invalidParams(where ? `${where}.${key}` : key, 'unknown field');
}

function percent(v: unknown, field: string, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) throw invalidParams(field, `must be an integer from 0 to ${max}`);
  return v;
}

/**
 * The one entry of the optional list `value` at `field` (absent, null or `[]`: undefined), an object
 * with only `fields`. Throws invalid params with `tooMany` when the list holds more than one entry
 * or is not a list, and naming `<field>[0]` when the entry is not such an object.
 */
function atMostOneEntry(value: unknown, field: string, fields: readonly string[], tooMany: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) return undefined;
  if (!Array.isArray(value) || value.length > 1) throw invalidParams(field, tooMany);
  const entry = value[0] as unknown;
  if (!isObject(entry)) throw invalidParams(`${field}[0]`, `must be {${fields.join(', ')}}`);
  onlyFields(entry, `${field}[0]`, fields);
  return entry;
}

/**
 * Validates the one params object of `mev_sendBundle` (MEV-Share bundle format v0.1) and maps it
 * onto the eth_sendBundle model, with the same guarantees (docs/decisions.md "Bundle submission"): every
 * transaction decoded and its sender recovered, chain id checked, at most {@link MAX_BUNDLE_TXS}
 * transactions and {@link MAX_BUNDLE_BYTES} bytes, target blocks after `head`.
 *
 * - `version`: `"v0.1"`.
 * - `inclusion`: `{block, maxBlock?}` hex quantities; `maxBlock` at most {@link MAX_MEV_BLOCK_RANGE} after `block`.
 * - `body`: `[{tx, canRevert}]`; `canRevert: true` puts the tx in `revertingTxHashes`. `{hash}` (a
 *   transaction of a matchmaker's private pool) and `{bundle}` (a nested bundle) are refused: this
 *   builder runs no matchmaker, so it cannot resolve them.
 * - `validity.refund`: at most one `{bodyIdx, percent}` → `refundTxHashes [body[bodyIdx]'s hash]`,
 *   `refundPercent = percent` (0..99), refunded by default to the sender of `body[bodyIdx]` (MEV-Share's rule).
 * - `validity.refundConfig`: at most one `{address, percent: 100}` → `refundRecipient` (needs `refund`).
 * - `privacy`: `{hints?, builders?}` checked and ignored (nothing is shared); `metadata`: `{originId?}` ignored.
 *
 * @throws {RpcError} -32602 whose `data.field` names the first bad field (`body[1].tx`, `inclusion.maxBlock`, ...).
 */
export function validateMevSendBundleParams(obj: Record<string, unknown>, ctx: { chainId: number; head: bigint }): ValidMevBundle {
  onlyFields(obj, '', ['version', 'inclusion', 'body', 'validity', 'privacy', 'metadata']);
  if (obj.version !== MEV_SHARE_VERSION) throw invalidParams('version', `required: "${MEV_SHARE_VERSION}"`);

  if (!isObject(obj.inclusion)) throw invalidParams('inclusion', 'required: {block, maxBlock?}');
  onlyFields(obj.inclusion, 'inclusion', ['block', 'maxBlock']);
  const block = targetBlock(obj.inclusion.block, 'inclusion.block', ctx.head);
  let maxBlock = block;
  if (obj.inclusion.maxBlock !== undefined && obj.inclusion.maxBlock !== null) {
    maxBlock = targetBlock(obj.inclusion.maxBlock, 'inclusion.maxBlock', ctx.head);
    if (maxBlock < block) throw invalidParams('inclusion.maxBlock', 'is before inclusion.block');
    if (maxBlock - block > MAX_MEV_BLOCK_RANGE) throw invalidParams('inclusion.maxBlock', `at most ${MAX_MEV_BLOCK_RANGE} blocks after inclusion.block`);
  }

  if (!Array.isArray(obj.body) || obj.body.length === 0) throw invalidParams('body', 'required: a non-empty array of {tx, canRevert}');
  if (obj.body.length > MAX_BUNDLE_TXS)
    throw invalidParams('body', `holds ${obj.body.length} entries; at most ${MAX_BUNDLE_TXS} per bundle`, { limit: MAX_BUNDLE_TXS });
  let total = 0;
  const entries = (obj.body as unknown[]).map((e, i) => {
    const field = `body[${i}]`;
    if (!isObject(e)) throw invalidParams(field, 'must be an object {tx, canRevert}');
    if ('hash' in e || 'bundle' in e) {
      throw invalidParams(
        field,
        `${'hash' in e ? '{hash}' : '{bundle}'} entries refer to transactions or bundles of a MEV-Share matchmaker, which this builder does not run: send the signed transaction as {tx, canRevert}`,
        { reason: 'unsupported_body_entry' },
      );
    }
    onlyFields(e, field, ['tx', 'canRevert']);
    if (typeof e.canRevert !== 'boolean') throw invalidParams(`${field}.canRevert`, 'required: true or false');
    if (typeof e.tx === 'string') total += (e.tx.length - 2) / 2;
    return { tx: e.tx, canRevert: e.canRevert };
  });
  if (total > MAX_BUNDLE_BYTES)
    throw invalidParams('body', `the bundle is ${total} bytes; at most ${MAX_BUNDLE_BYTES} bytes per bundle`, { bytes: total, limit: MAX_BUNDLE_BYTES });
  const txs: BundleTx[] = entries.map((e, i) => decodeBundleTxSync(e.tx, `body[${i}].tx`, ctx.chainId));
  const seen = new Map<string, number>();
  txs.forEach((tx, i) => {
    const prev = seen.get(tx.hash);
    if (prev !== undefined) throw invalidParams(`body[${i}].tx`, `duplicate of body[${prev}].tx`);
    seen.set(tx.hash, i);
  });

  let refundPercent: number | undefined;
  let refundTxHashes: Hash[] = [];
  let refundRecipient: ValidBundleParams['refundRecipient'];
  if (obj.validity !== undefined && obj.validity !== null) {
    if (!isObject(obj.validity)) throw invalidParams('validity', 'must be an object {refund?, refundConfig?}');
    onlyFields(obj.validity, 'validity', ['refund', 'refundConfig']);
    const { refund, refundConfig } = obj.validity;
    const r = atMostOneEntry(refund, 'validity.refund', ['bodyIdx', 'percent'], 'at most one {bodyIdx, percent}: this builder pays one refund per bundle');
    if (r) {
      const idx = r.bodyIdx;
      if (typeof idx !== 'number' || !Number.isInteger(idx) || idx < 0 || idx >= txs.length)
        throw invalidParams('validity.refund[0].bodyIdx', `must be the index of a body entry (0 to ${txs.length - 1})`);
      refundPercent = percent(r.percent, 'validity.refund[0].percent', 99);
      refundTxHashes = [txs[idx].hash];
      refundRecipient = txs[idx].from;
    }
    const c = atMostOneEntry(
      refundConfig,
      'validity.refundConfig',
      ['address', 'percent'],
      'at most one {address, percent: 100}: this builder pays each refund to one address',
    );
    if (c) {
      if (typeof c.address !== 'string' || !isAddress(c.address, { strict: false }))
        throw invalidParams('validity.refundConfig[0].address', 'must be a 20-byte 0x address');
      if (c.percent !== 100) throw invalidParams('validity.refundConfig[0].percent', 'must be 100 (the whole refund to this address)');
      if (refundPercent === undefined) throw invalidParams('validity.refundConfig', 'needs validity.refund (which transaction and what percent)');
      refundRecipient = getAddress(c.address);
    }
  }

  if (obj.privacy !== undefined && obj.privacy !== null) {
    if (!isObject(obj.privacy)) throw invalidParams('privacy', 'must be an object {hints?, builders?}');
    onlyFields(obj.privacy, 'privacy', ['hints', 'builders']);
    const { hints, builders } = obj.privacy;
    if (hints !== undefined && (!Array.isArray(hints) || hints.some((h) => !(MEV_SHARE_HINTS as readonly unknown[]).includes(h))))
      throw invalidParams('privacy.hints', `must be an array of ${MEV_SHARE_HINTS.join(', ')}`);
    if (builders !== undefined && (!Array.isArray(builders) || builders.some((b) => typeof b !== 'string')))
      throw invalidParams('privacy.builders', 'must be an array of strings');
  }
  if (obj.metadata !== undefined && obj.metadata !== null) {
    if (!isObject(obj.metadata)) throw invalidParams('metadata', 'must be an object {originId?}');
    onlyFields(obj.metadata, 'metadata', ['originId']);
    if (obj.metadata.originId !== undefined && typeof obj.metadata.originId !== 'string') throw invalidParams('metadata.originId', 'must be a string');
  }

  return {
    bundle: {
      txs,
      blockNumber: block,
      revertingTxHashes: txs.filter((_, i) => entries[i].canRevert).map((t) => t.hash),
      droppingTxHashes: [],
      refundPercent,
      refundRecipient,
      refundTxHashes,
      delayedRefund: false,
      bottomOfBlock: false,
      targetAddresses: [],
      targetSlots: [],
    },
    maxBlock,
  };
}
