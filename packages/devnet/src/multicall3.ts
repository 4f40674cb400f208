import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { isHex, type Address, type Hex } from 'viem';
import { devClients } from './clients.js';
import { MULTICALL3_ADDRESS } from './constants.js';

export { MULTICALL3_ADDRESS };

let creationCode: Hex | undefined;

/**
 * Multicall3's creation bytecode, read from the installed viem (`multicall3Bytecode` in
 * `viem/_esm/constants/contracts.js`, which viem uses for deployless multicalls). viem does not export it from
 * a public entry point (its `exports` map blocks deep imports), so the file is located through
 * `viem/package.json` and the constant is read from its text.
 *
 * @returns `0x`-prefixed creation code.
 * @throws {Error} If viem's file or the constant cannot be found (viem layout changed).
 */
export function multicall3CreationCode(): Hex {
  if (creationCode) return creationCode;
  const require = createRequire(import.meta.url);
  const viemDir = path.dirname(require.resolve('viem/package.json'));
  const candidates = ['_esm/constants/contracts.js', '_cjs/constants/contracts.js'];
  for (const rel of candidates) {
    let text: string;
    try {
      text = readFileSync(path.join(viemDir, rel), 'utf8');
    } catch {
      continue;
    }
    const match = /multicall3Bytecode\s*=\s*['"](0x[0-9a-fA-F]+)['"]/.exec(text);
    if (match && isHex(match[1])) {
      creationCode = match[1] as Hex;
      return creationCode;
    }
  }
  throw new Error(`multicall3CreationCode: multicall3Bytecode not found in ${viemDir}/{${candidates.join(',')}}`);
}

/**
 * Puts Multicall3 at its canonical address `0xcA11bde05977b3631167028862bE2a173976CA11` on a dev node.
 *
 * The runtime code is obtained by running viem's Multicall3 creation code in an `eth_call` without `to`
 * (a simulated deployment: no transaction, no nonce used), then placed with `anvil_setCode`, then read
 * back. Idempotent: if the address already holds that code, nothing is written.
 *
 * @param rpcUrl - HTTP JSON-RPC URL of an anvil node.
 * @returns The Multicall3 address.
 * @throws {Error} If the node is unreachable, does not support `anvil_setCode`, or the code read back differs.
 */
export async function installMulticall3(rpcUrl: string): Promise<Address> {
  const { publicClient, testClient } = await devClients(rpcUrl);
  const { data: runtime } = await publicClient.call({ data: multicall3CreationCode() });
  if (!runtime || runtime === '0x') throw new Error('installMulticall3: simulated deployment returned no code');
  const existing = await publicClient.getCode({ address: MULTICALL3_ADDRESS });
  if (existing?.toLowerCase() === runtime.toLowerCase()) return MULTICALL3_ADDRESS;
  await testClient.setCode({ address: MULTICALL3_ADDRESS, bytecode: runtime });
  const placed = await publicClient.getCode({ address: MULTICALL3_ADDRESS });
  if (placed?.toLowerCase() !== runtime.toLowerCase()) {
    throw new Error(`installMulticall3: code at ${MULTICALL3_ADDRESS} differs after anvil_setCode`);
  }
  return MULTICALL3_ADDRESS;
}
