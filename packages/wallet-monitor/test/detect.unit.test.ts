import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_SCHEDULE_MS,
  erc20TransfersFromLogs,
  nativeTransfersFromParityTraces,
  nativeTransfersFromTraces,
  nativeTransfersFromTransactions,
  TRANSFER_TOPIC,
  webhookId,
} from '../src/index.js';

const A = '0x' + 'a'.repeat(40);
const B = '0x' + 'b'.repeat(40);
const C = '0x' + 'c'.repeat(40);
const T = '0x' + '1'.repeat(40);
const H1 = ('0x' + '01'.repeat(32)) as `0x${string}`;
const H2 = ('0x' + '02'.repeat(32)) as `0x${string}`;
const topic = (a: string) => '0x' + '0'.repeat(24) + a.slice(2);

describe('nativeTransfersFromTraces', () => {
  it('finds top-level and internal value transfers, skipping reverted subtrees and value-less call types', () => {
    const traces = [
      {
        txHash: H1,
        result: {
          type: 'CALL',
          from: A,
          to: B,
          value: '0x10',
          calls: [
            { type: 'CALL', from: B, to: C, value: '0x5' },
            { type: 'DELEGATECALL', from: B, to: C, value: '0x10' },
            { type: 'STATICCALL', from: B, to: C },
            { type: 'CALL', from: B, to: C, value: '0x7', error: 'execution reverted', calls: [{ type: 'CALL', from: C, to: A, value: '0x1' }] },
            { type: 'CALL', from: B, to: C, value: '0x0', calls: [{ type: 'SELFDESTRUCT', from: C, to: A, value: '0x3' }] },
          ],
        },
      },
      { result: { type: 'CALL', from: A, to: B, value: '0x1', error: 'out of gas' } },
      { result: { type: 'CREATE', from: A, to: C, value: '0x2' } },
    ];
    const out = nativeTransfersFromTraces(traces, [H1, H2, H2]);
    expect(out.map((t) => [t.txHash, t.position, t.from, t.to, t.amount])).toEqual([
      [H1, { kind: 'tx' }, A, B, 16n],
      [H1, { kind: 'trace', path: [0] }, B, C, 5n],
      [H1, { kind: 'trace', path: [4, 0] }, C, A, 3n],
      [H2, { kind: 'tx' }, A, C, 2n],
    ]);
    expect(out.every((t) => t.token === null && t.logIndex === null)).toBe(true);
  });
});

describe('nativeTransfersFromParityTraces (trace_block)', () => {
  it('finds the same transfers and positions as the callTracer path, skipping failed subtrees, delegate calls and rewards', () => {
    const traces = [
      { type: 'call', action: { from: A, to: B, value: '0x10', callType: 'call' }, traceAddress: [], transactionHash: H1 },
      { type: 'call', action: { from: B, to: C, value: '0x5', callType: 'call' }, traceAddress: [0], transactionHash: H1 },
      { type: 'call', action: { from: B, to: C, value: '0x10', callType: 'delegatecall' }, traceAddress: [1], transactionHash: H1 },
      { type: 'call', action: { from: B, to: C, value: '0x7', callType: 'call' }, error: 'Reverted', traceAddress: [3], transactionHash: H1 },
      { type: 'call', action: { from: C, to: A, value: '0x1', callType: 'call' }, traceAddress: [3, 0], transactionHash: H1 },
      { type: 'suicide', action: { address: C, refundAddress: A, balance: '0x3' }, traceAddress: [4, 0], transactionHash: H1 },
      { type: 'create', action: { from: A, value: '0x2' }, result: { address: C }, traceAddress: [], transactionHash: H2 },
      { type: 'reward', action: { author: A, value: '0x99' }, traceAddress: [], transactionHash: null },
    ];
    const out = nativeTransfersFromParityTraces(traces as never);
    expect(out.map((t) => [t.txHash, t.position, t.from, t.to, t.amount])).toEqual([
      [H1, { kind: 'tx' }, A, B, 16n],
      [H1, { kind: 'trace', path: [0] }, B, C, 5n],
      [H1, { kind: 'trace', path: [4, 0] }, C, A, 3n],
      [H2, { kind: 'tx' }, A, C, 2n],
    ]);
  });
});

describe('nativeTransfersFromTransactions', () => {
  it('keeps value transfers with a recipient', () => {
    const out = nativeTransfersFromTransactions([
      { hash: H1, from: A, to: B, value: 5n },
      { hash: H2, from: A, to: B, value: 0n },
      { hash: H2, from: A, to: null, value: 9n },
    ]);
    expect(out).toEqual([{ txHash: H1, position: { kind: 'tx' }, from: A, to: B, amount: 5n, token: null, logIndex: null }]);
  });
});

describe('erc20TransfersFromLogs', () => {
  it('reads ERC-20 Transfer logs and ignores ERC-721 (4 topics), other events and removed logs', () => {
    const data = '0x' + 1234n.toString(16).padStart(64, '0');
    const logs = [
      { address: T, topics: [TRANSFER_TOPIC, topic(A), topic(B)], data, transactionHash: H1, logIndex: 3 },
      { address: T, topics: [TRANSFER_TOPIC, topic(A), topic(B), topic(C)], data: '0x', transactionHash: H1, logIndex: 4 },
      { address: T, topics: ['0x' + 'f'.repeat(64), topic(A), topic(B)], data, transactionHash: H1, logIndex: 5 },
      { address: T, topics: [TRANSFER_TOPIC, topic(A), topic(B)], data, transactionHash: H1, logIndex: 6, removed: true },
    ];
    expect(erc20TransfersFromLogs(logs)).toEqual([
      { txHash: H1, position: { kind: 'log', logIndex: 3 }, from: A, to: B, amount: 1234n, token: T, logIndex: 3 },
    ]);
  });
});

describe('webhookId', () => {
  const base = { chain: 'ethereum' as const, txHash: H1, position: { kind: 'log' as const, logIndex: 1 }, subscriptionId: 'sub_1', type: 'transfer_in' };
  it('is deterministic and differs by each part', () => {
    const id = webhookId(base);
    expect(id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(webhookId({ ...base, txHash: H1.toUpperCase().replace('0X', '0x') as `0x${string}` })).toBe(id);
    for (const other of [
      { ...base, chain: 'base' as const },
      { ...base, txHash: H2 },
      { ...base, position: { kind: 'log' as const, logIndex: 2 } },
      { ...base, position: { kind: 'tx' as const } },
      { ...base, subscriptionId: 'sub_2' },
      { ...base, type: 'transfer_out' },
    ]) {
      expect(webhookId(other)).not.toBe(id);
    }
  });
});

describe('configuration', () => {
  it('retries on the schedule of docs/decisions.md "Wallet monitor" over more than 24 h', () => {
    expect(DEFAULT_RETRY_SCHEDULE_MS).toEqual([0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(DEFAULT_RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0)).toBeGreaterThan(24 * 3600 * 1000);
  });
});
