// The checked-in build (src/artifacts.generated.ts) is what contracts/*.sol compile to today, and our ABIs
// offer everything @x402/evm 2.27 calls: each function, event and error of its ABI, with the same signature.
import { readFileSync } from 'node:fs';
import {
  BATCH_SETTLEMENT_ADDRESS,
  PERMIT2_ADDRESS as X402_PERMIT2_ADDRESS,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS as X402_COLLECTOR,
  x402ExactPermit2ProxyABI,
  x402ExactPermit2ProxyAddress,
  x402UptoPermit2ProxyABI,
  x402UptoPermit2ProxyAddress,
} from '@x402/evm';
import { toFunctionSignature, type Abi } from 'viem';
import { formatAbiItem } from 'viem/utils';
import { describe, expect, it } from 'vitest';
import { artifactsSource, compileX402Contracts } from '../scripts/compile.js';
import {
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  erc3009DepositCollectorRuntimeCode,
  exactPermit2ProxyRuntimeCode,
  fillImmutables,
  PERMIT2_ADDRESS,
  PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
  permit2DepositCollectorRuntimeCode,
  uptoPermit2ProxyRuntimeCode,
  X402_BATCH_SETTLEMENT_ADDRESS,
  X402_EXACT_PERMIT2_PROXY_ADDRESS,
  X402_UPTO_PERMIT2_PROXY_ADDRESS,
  x402BatchSettlementAbi,
  x402ExactPermit2ProxyAbi,
  x402UptoPermit2ProxyAbi,
} from '../src/index.js';
import { Permit2DepositCollectorArtifact } from '../src/artifacts.generated.js';
import { x402EvmChunkDeclaring } from './x402evmInternals.js';

/** Every function, event and error of `abi` as its canonical signature, plus each function's outputs and mutability. */
function signatures(abi: Abi): string[] {
  return abi
    .filter((i): i is Extract<Abi[number], { type: 'function' | 'event' | 'error' }> => i.type === 'function' || i.type === 'event' || i.type === 'error')
    .map((i) =>
      i.type === 'function'
        ? `${toFunctionSignature(i)} ${i.stateMutability} -> ${i.outputs.map((o: { type: string }) => o.type).join(',')}`
        : formatAbiItem(i),
    )
    .sort();
}

/** `@x402/evm` 2.27 uses `batchSettlementABI` internally without exporting it: found in its ESM build. */
async function officialBatchSettlementAbi(): Promise<Abi> {
  const mod = await x402EvmChunkDeclaring('batchSettlementABI');
  const abi = Object.values(mod).find((v) => Array.isArray(v) && v.some((i) => (i as { name?: string }).name === 'claimWithSignature'));
  if (!abi) throw new Error('batchSettlementABI not found in @x402/evm');
  return abi as Abi;
}

describe('the checked-in build', () => {
  it('equals a fresh solc-js compile of contracts/ (regenerate: npx tsx packages/x402-contracts/scripts/build-contracts.ts)', () => {
    const checkedIn = readFileSync(new URL('../src/artifacts.generated.ts', import.meta.url), 'utf8');
    expect(checkedIn).toBe(artifactsSource(compileX402Contracts()));
  });
});

describe('x402UptoPermit2Proxy', () => {
  it('sits where @x402/evm looks for it and is bound to the Permit2 it signs for', () => {
    expect(X402_UPTO_PERMIT2_PROXY_ADDRESS).toBe(x402UptoPermit2ProxyAddress);
    expect(PERMIT2_ADDRESS).toBe(X402_PERMIT2_ADDRESS);
    const code = uptoPermit2ProxyRuntimeCode();
    expect(code.toLowerCase()).toContain(PERMIT2_ADDRESS.slice(2).toLowerCase());
    expect(uptoPermit2ProxyRuntimeCode('0x00000000000000000000000000000000000000aa')).not.toBe(code);
  });

  it('offers every function, event and error of @x402/evm 2.27 x402UptoPermit2ProxyABI, with the same signatures', () => {
    const ours = new Set(signatures(x402UptoPermit2ProxyAbi as Abi));
    const theirs = signatures(x402UptoPermit2ProxyABI as Abi);
    expect(theirs.length).toBeGreaterThan(10);
    expect(theirs.filter((s) => !ours.has(s))).toEqual([]);
  });
});

describe('x402ExactPermit2Proxy', () => {
  it('sits where @x402/evm looks for it and is bound to the Permit2 it signs for', () => {
    expect(X402_EXACT_PERMIT2_PROXY_ADDRESS).toBe(x402ExactPermit2ProxyAddress);
    const code = exactPermit2ProxyRuntimeCode();
    expect(code.toLowerCase()).toContain(PERMIT2_ADDRESS.slice(2).toLowerCase());
    expect(exactPermit2ProxyRuntimeCode('0x00000000000000000000000000000000000000aa')).not.toBe(code);
  });

  it('offers every function, event and error of @x402/evm 2.27 x402ExactPermit2ProxyABI, with the same signatures', () => {
    const ours = new Set(signatures(x402ExactPermit2ProxyAbi as Abi));
    const theirs = signatures(x402ExactPermit2ProxyABI as Abi);
    expect(theirs.length).toBeGreaterThan(10);
    expect(theirs.filter((s) => !ours.has(s))).toEqual([]);
  });
});

describe('Permit2DepositCollector', () => {
  it('sits where @x402/evm sends Permit2 deposits, bound to the batch settlement and Permit2 addresses', async () => {
    const { PERMIT2_DEPOSIT_COLLECTOR_ADDRESS: theirs } = await x402EvmChunkDeclaring('PERMIT2_DEPOSIT_COLLECTOR_ADDRESS');
    expect(PERMIT2_DEPOSIT_COLLECTOR_ADDRESS).toBe(theirs);
    const code = permit2DepositCollectorRuntimeCode().toLowerCase();
    expect(code).toContain(X402_BATCH_SETTLEMENT_ADDRESS.slice(2).toLowerCase());
    expect(code).toContain(PERMIT2_ADDRESS.slice(2).toLowerCase());
  });

  it('fills each immutable by name: swapping the two addresses gives other code', () => {
    const swapped = permit2DepositCollectorRuntimeCode(PERMIT2_ADDRESS, X402_BATCH_SETTLEMENT_ADDRESS);
    expect(swapped).not.toBe(permit2DepositCollectorRuntimeCode());
    expect(() => fillImmutables(Permit2DepositCollectorArtifact, { PERMIT2: `0x${'00'.repeat(32)}` })).toThrow(/BATCH_SETTLEMENT/);
    expect(() =>
      fillImmutables(Permit2DepositCollectorArtifact, {
        PERMIT2: `0x${'00'.repeat(32)}`,
        BATCH_SETTLEMENT: `0x${'00'.repeat(32)}`,
        OWNER: `0x${'00'.repeat(32)}`,
      }),
    ).toThrow(/OWNER/);
  });
});

describe('x402BatchSettlement and ERC3009DepositCollector', () => {
  it('sit where @x402/evm looks for them; the collector is bound to the batch settlement address', () => {
    expect(X402_BATCH_SETTLEMENT_ADDRESS).toBe(BATCH_SETTLEMENT_ADDRESS);
    expect(ERC3009_DEPOSIT_COLLECTOR_ADDRESS).toBe(X402_COLLECTOR);
    expect(erc3009DepositCollectorRuntimeCode().toLowerCase()).toContain(X402_BATCH_SETTLEMENT_ADDRESS.slice(2).toLowerCase());
  });

  it('offers every function and event of @x402/evm 2.27 batchSettlementABI, with the same signatures', async () => {
    const ours = new Set(signatures(x402BatchSettlementAbi as Abi));
    const theirs = signatures(await officialBatchSettlementAbi());
    expect(theirs.length).toBeGreaterThan(15);
    expect(theirs.filter((s) => !ours.has(s))).toEqual([]);
  });
});
