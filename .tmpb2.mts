import { keccak256, parseTransaction, serializeTransaction, parseGwei, hexToBytes, fromRlp, toRlp, concatHex, sliceHex } from 'viem';
import { keccak_256 } from '@noble/hashes/sha3';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
const acct = privateKeyToAccount(generatePrivateKey());
const raws = [];
for (let i = 0; i < 1000; i++) raws.push(await acct.signTransaction({ type: 'eip1559', chainId: 1, nonce: i, to: acct.address, value: 1n, gas: 21000n, maxFeePerGas: parseGwei('50'), maxPriorityFeePerGas: parseGwei('2') }));
const time = (name, fn) => { const t = performance.now(); for (const r of raws) fn(r); console.log(name, ((performance.now() - t) * 1000 / raws.length).toFixed(1), 'µs'); };
for (let k = 0; k < 3; k++) {
time('parseTransaction', (r) => parseTransaction(r));
time('parse+serialize', (r) => { const tx = parseTransaction(r); serializeTransaction({ ...tx, r: undefined, s: undefined, v: undefined, yParity: undefined }); });
time('keccak256 viem hex', (r) => keccak256(r));
time('keccak bytes (hexToBytes + noble)', (r) => keccak_256(hexToBytes(r)));
time('Buffer.from hex + noble', (r) => keccak_256(Buffer.from(r.slice(2), 'hex')));
time('fromRlp', (r) => fromRlp(sliceHex(r, 1)));
}
