// The checked-in Permit2 build (src/permit2, built from npm sources by scripts/build-permit2.ts) is the
// canonical one: CREATE2 through the deterministic deployer with Permit2's salt lands on 0x0000…8BA3 only
// if the creation code is byte for byte the deployed one. No services.
import { getContractAddress, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  DETERMINISTIC_DEPLOYER_ADDRESS,
  isPermit2Runtime,
  PERMIT2_ADDRESS,
  PERMIT2_SALT,
  permit2Create2Address,
  permit2DomainSeparator,
} from '../src/permit2/index.js';
import { permit2Bytecode, permit2DeployedBytecode, permit2ImmutableReferences } from '../src/permit2/permit2Artifact.generated.js';

describe('Permit2 build', () => {
  it('lands on the canonical address through the deterministic deployer', () => {
    expect(permit2Create2Address()).toBe(PERMIT2_ADDRESS);
    // A one-byte change in the creation code moves it elsewhere.
    const tampered: Hex = `${permit2Bytecode.slice(0, -2)}${permit2Bytecode.endsWith('00') ? '01' : '00'}` as Hex;
    expect(getContractAddress({ opcode: 'CREATE2', from: DETERMINISTIC_DEPLOYER_ADDRESS, salt: PERMIT2_SALT, bytecode: tampered })).not.toBe(PERMIT2_ADDRESS);
  });

  it('has two 32-byte immutables, and isPermit2Runtime accepts only them filled for the chain', () => {
    const refs = Object.values(permit2ImmutableReferences).flat();
    expect(Object.keys(permit2ImmutableReferences)).toHaveLength(2);
    expect(refs.every((r) => r.length === 32)).toBe(true);
    const fill = (chainId: bigint, separator: string, swap = false) => {
      const [a, b] = Object.keys(permit2ImmutableReferences).sort((x, y) => Number(x) - Number(y));
      // EIP712.sol declares _CACHED_DOMAIN_SEPARATOR before _CACHED_CHAIN_ID.
      const values: Record<string, string> = swap
        ? { [a]: chainId.toString(16).padStart(64, '0'), [b]: separator.slice(2) }
        : { [a]: separator.slice(2), [b]: chainId.toString(16).padStart(64, '0') };
      let hex = permit2DeployedBytecode.slice(2);
      for (const [id, rs] of Object.entries(permit2ImmutableReferences)) {
        for (const { start, length } of rs) hex = hex.slice(0, start * 2) + values[id] + hex.slice((start + length) * 2);
      }
      return `0x${hex}` as const;
    };
    const good = fill(8453n, permit2DomainSeparator(8453));
    expect(isPermit2Runtime(good, 8453)).toBe(true);
    expect(isPermit2Runtime(fill(8453n, permit2DomainSeparator(8453), true), 8453)).toBe(true);
    expect(isPermit2Runtime(good, 1)).toBe(false); // another chain's domain
    expect(isPermit2Runtime(fill(8453n, permit2DomainSeparator(1)), 8453)).toBe(false); // a separator cached for another chain
    expect(isPermit2Runtime(permit2DeployedBytecode, 8453)).toBe(false); // immutables never set
    expect(isPermit2Runtime(`${good.slice(0, 10)}ff${good.slice(12)}` as Hex, 8453)).toBe(false); // code changed outside the immutables
    expect(isPermit2Runtime(undefined, 8453)).toBe(false);
  });
});
