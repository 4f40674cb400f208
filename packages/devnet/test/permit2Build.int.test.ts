// The checked-in Permit2 build (src/permit2/permit2Artifact.generated.ts) still equals a compile of the
// published sources in node_modules (@uniswap/v4-periphery lib/permit2) with solc 0.8.17 and Permit2's own
// settings. No chain; an integration test because a cold solc-js compile takes about a minute (then cached
// under node_modules/.cache/acg-permit2). On a mismatch: npx tsx packages/devnet/scripts/build-permit2.ts
import { describe, expect, it } from 'vitest';
import { compilePermit2 } from '../src/permit2/compile.js';
import { permit2Abi, permit2Bytecode, permit2DeployedBytecode, permit2ImmutableReferences } from '../src/permit2/permit2Artifact.generated.js';

describe('Permit2 build from npm sources', () => {
  it('equals the checked-in artifact', { timeout: 600_000 }, () => {
    const build = compilePermit2();
    expect(build.bytecode).toBe(permit2Bytecode);
    expect(build.deployedBytecode).toBe(permit2DeployedBytecode);
    expect(build.immutableReferences).toEqual(permit2ImmutableReferences);
    expect(build.abi).toEqual(permit2Abi);
  });
});
