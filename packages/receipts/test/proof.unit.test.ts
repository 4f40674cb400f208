import { compactVerify, createLocalJWKSet, decodeProtectedHeader } from 'jose';
import { getAddress, keccak256, toHex } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import {
  buildJwks,
  canonicalSha256,
  devReceiptKeys,
  jwsKeyFromHex,
  ProofSigner,
  ProofVerificationError,
  ReceiptKeyError,
  signingKeyFromHex,
  verifyProof,
} from '../src/index.js';

const execution = {
  execution_id: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T',
  capability_id: 'intelligence.wallet_balances',
  input: { chain: 'base', address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' },
  result: { block_number: '15', usdc: { balance: '9999999000', decimals: 6 } },
  payment: { payer: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', tx_hash: `0x${'ab'.repeat(32)}`, amount: '1000' },
};

async function setup() {
  const dev = devReceiptKeys();
  const jws = await jwsKeyFromHex(dev.jwsKey);
  const signing = await signingKeyFromHex(dev.signingKey);
  return { jws, signing, jwks: buildJwks(jws, signing), signer: new ProofSigner(jws, 'eip155:8453') };
}

describe('receipt keys and JWKS', () => {
  it('publishes both keys with kid, use and alg; the secp256k1 JWK derives the signing address', async () => {
    const { jws, signing, jwks } = await setup();
    expect(jwks.keys).toHaveLength(2);
    expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', use: 'sig', alg: 'EdDSA', kid: jws.kid });
    expect(jwks.keys[1]).toMatchObject({ kty: 'EC', crv: 'secp256k1', use: 'sig', alg: 'ES256K', kid: signing.kid });
    const k = jwks.keys[1];
    const uncompressed = toHex(Buffer.concat([Buffer.from([4]), Buffer.from(k.x!, 'base64url'), Buffer.from(k.y!, 'base64url')]));
    expect(getAddress(publicKeyToAddress(uncompressed))).toBe(signing.account.address);
    // neither JWK carries private material
    for (const key of jwks.keys) expect(key).not.toHaveProperty('d');
  });

  it('keeps a retired key listed once, after the current ones', async () => {
    const { jws, signing } = await setup();
    const old = await jwsKeyFromHex(keccak256(toHex('old key')));
    const jwks = buildJwks(jws, signing, [old.publicJwk, jws.publicJwk]);
    expect(jwks.keys.map((k) => k.kid)).toEqual([jws.kid, signing.kid, old.kid]);
  });

  it('refuses malformed keys naming the variable', async () => {
    await expect(jwsKeyFromHex('0x1234')).rejects.toThrow(ReceiptKeyError);
    await expect(signingKeyFromHex(`0x${'00'.repeat(32)}`)).rejects.toThrow(/RECEIPT_SIGNING_KEY/);
  });

  it('dev keys are neither the dev treasury nor the facilitator', async () => {
    const { signing } = await setup();
    expect(signing.account.address).not.toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(signing.account.address).not.toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
  });
});

describe('execution proofs', () => {
  it('signs a JWS that jose verifies with the JWKS, naming its kid, with hashes of the canonical input and result', async () => {
    const { jwks, signer, jws } = await setup();
    const proof = await signer.sign(execution);
    expect(decodeProtectedHeader(proof)).toMatchObject({ alg: 'EdDSA', kid: jws.kid });
    const { payload } = await compactVerify(proof, createLocalJWKSet(jwks));
    const decoded = JSON.parse(new TextDecoder().decode(payload));
    expect(decoded).toMatchObject({
      execution_id: execution.execution_id,
      capability_id: execution.capability_id,
      input_sha256: canonicalSha256(execution.input),
      result_sha256: canonicalSha256(execution.result),
      payment: { network: 'eip155:8453', ...execution.payment },
      provider: null,
    });
    // key order does not change the canonical hash (RFC 8785)
    expect(canonicalSha256({ b: 1, a: 2 })).toBe(canonicalSha256({ a: 2, b: 1 }));
    await expect(verifyProof(proof, jwks, execution)).resolves.toMatchObject({ execution_id: execution.execution_id });
  });

  it('fails when one byte of the result changes, or the signature is not from a listed key', async () => {
    const { jwks, signer, signing } = await setup();
    const proof = await signer.sign(execution);
    const tampered = { ...execution, result: { ...execution.result, block_number: '16' } };
    await expect(verifyProof(proof, jwks, tampered)).rejects.toMatchObject({ code: 'result_mismatch' });
    const other = new ProofSigner(await jwsKeyFromHex(keccak256(toHex('another key'))), 'eip155:8453');
    await expect(verifyProof(await other.sign(execution), jwks, execution)).rejects.toBeInstanceOf(ProofVerificationError);
    const [h, p, s] = proof.split('.');
    // Flip one bit of the first signature byte (a full base64url character, never padding bits).
    const sig = Buffer.from(s, 'base64url');
    sig[0] ^= 0x01;
    const flipped = `${h}.${p}.${sig.toString('base64url')}`;
    expect(flipped).not.toBe(proof);
    await expect(verifyProof(flipped, jwks, execution)).rejects.toMatchObject({ code: 'bad_signature' });
    expect(signing.kid).not.toBe(other.kid);
  });
});
