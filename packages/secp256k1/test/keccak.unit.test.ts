import { randomBytes } from 'node:crypto';
import { bytesToHex, keccak256 } from 'viem';
import { describe, expect, it } from 'vitest';
import { keccak256Bytes, keccak256Hex, keccakReady } from '../src/keccak.js';

describe('keccak256 (hash-wasm) used by the intake', () => {
  it('equals viem’s keccak256 for inputs of 0 to 1,000 bytes (across the 136-byte rate), as bytes and as hex', async () => {
    await keccakReady();
    for (let len = 0; len <= 1000; len += len < 300 ? 1 : 37) {
      const data = randomBytes(len);
      const expected = keccak256(data);
      expect(keccak256Hex(data)).toBe(expected);
      expect(keccak256Hex(bytesToHex(data))).toBe(expected);
      expect(bytesToHex(keccak256Bytes(data))).toBe(expected);
    }
  });

  it('returns a fresh array each time (one digest never overwrites another)', async () => {
    await keccakReady();
    const a = keccak256Bytes(Buffer.from('a'));
    const before = bytesToHex(a);
    keccak256Bytes(Buffer.from('b'));
    expect(bytesToHex(a)).toBe(before);
  });
});
