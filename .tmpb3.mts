import { createRequire } from 'node:module';
import { keccak256 } from 'viem';
const require = createRequire('/tmp/hw/index.js');
const { createKeccak } = require('hash-wasm');
const { keccak256: js3 } = require('js-sha3');
const h = await createKeccak(256);
const inputs = [Buffer.alloc(500, 7), Buffer.alloc(64, 3), Buffer.alloc(120, 9)];
for (const inp of inputs) for (let k = 0; k < 2; k++) {
  const N = 20000;
  let t = performance.now(); for (let i = 0; i < N; i++) keccak256(inp, 'bytes'); const a = (performance.now() - t) * 1000 / N;
  t = performance.now(); for (let i = 0; i < N; i++) { h.init(); h.update(inp); h.digest('binary'); } const b = (performance.now() - t) * 1000 / N;
  t = performance.now(); for (let i = 0; i < N; i++) js3.arrayBuffer(inp); const c = (performance.now() - t) * 1000 / N;
  console.log(inp.length, 'viem', a.toFixed(2), 'hash-wasm', b.toFixed(2), 'js-sha3', c.toFixed(2));
}
