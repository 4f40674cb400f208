import { createKeccak, type IHasher } from 'hash-wasm';
import { keccak256 as viemKeccak256, type Hex } from 'viem';

/**
 * keccak256 for the intake's hot path: hash-wasm's WebAssembly Keccak (no native binary, every
 * platform), 10-30 times faster here than viem's pure-JS one (@noble/hashes), which is used until
 * the WebAssembly module has compiled (a few milliseconds after import) or if it ever fails to.
 * Results are identical; `keccak.unit.test.ts` checks them against viem.
 */
let wasm: IHasher | undefined;
const loading: Promise<void> = createKeccak(256).then(
  (h) => {
    wasm = h;
  },
  () => undefined,
);

/** Resolves once the WebAssembly hasher is ready (or has failed and viem's is used). */
export function keccakReady(): Promise<void> {
  return loading;
}

/** keccak256 of `data` as 32 bytes. */
export function keccak256Bytes(data: Uint8Array): Uint8Array {
  if (!wasm) return viemKeccak256(data, 'bytes');
  wasm.init();
  wasm.update(data);
  return wasm.digest('binary');
}

/** keccak256 of `data` (bytes, or 0x-prefixed hex of whole bytes) as 0x-prefixed lowercase hex, like viem's `keccak256`. */
export function keccak256Hex(data: Uint8Array | Hex): Hex {
  const bytes = typeof data === 'string' ? Buffer.from(data.slice(2), 'hex') : data;
  return `0x${Buffer.from(keccak256Bytes(bytes)).toString('hex')}`;
}
