import { createRequire } from 'node:module';
import { keccak256, stringToHex, recoverMessageAddress, hashMessage, hexToBytes } from 'viem';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { secp256k1 } from '@noble/curves/secp256k1';
const require = createRequire(import.meta.url);
const addon = require('/tmp/secpcheck/package/prebuilds/linux-x64/secp256k1.glibc.node');
const native = require('/tmp/secpcheck/package/lib/index.js')(new addon.Secp256k1());
const acct = privateKeyToAccount(generatePrivateKey());
const msgs = [];
for (let i = 0; i < 1000; i++) {
  const body = `{"i":${i}}`;
  const sig = await acct.signMessage({ message: keccak256(stringToHex(body)) });
  msgs.push({ body, sig, h: hashMessage(keccak256(stringToHex(body))) });
}
for (let rep = 0; rep < 2; rep++) {
let t = performance.now();
for (const m of msgs) await recoverMessageAddress({ message: keccak256(stringToHex(m.body)), signature: m.sig });
console.log('viem recoverMessageAddress µs', ((performance.now() - t) * 1000 / msgs.length).toFixed(0));
t = performance.now();
for (const m of msgs) { const s = hexToBytes(m.sig); const v = s[64]; native.ecdsaRecover(s.subarray(0,64), v-27, hexToBytes(m.h), false); }
console.log('native ecdsaRecover µs', ((performance.now() - t) * 1000 / msgs.length).toFixed(0));
t = performance.now();
for (const m of msgs) { const s = hexToBytes(m.sig); const v = s[64]; secp256k1.Signature.fromCompact(s.subarray(0,64)).addRecoveryBit(v-27).recoverPublicKey(hexToBytes(m.h).slice()).toRawBytes(false); }
console.log('noble 1.9.7 recoverPublicKey µs', ((performance.now() - t) * 1000 / msgs.length).toFixed(0));
t = performance.now();
for (const m of msgs) keccak256(stringToHex(m.body + 'x'.repeat(300)));
console.log('keccak256 of 300B hex µs', ((performance.now() - t) * 1000 / msgs.length).toFixed(1));
}
