import { createHash } from 'node:crypto';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import {
  canonicalize,
  extractOffersFromPaymentRequired,
  extractReceiptFromResponse,
  verifyOfferSignatureEIP712,
  verifyReceiptSignatureEIP712,
  type EIP712SignedOffer,
  type EIP712SignedReceipt,
} from '@x402/extensions/offer-receipt';
import { getAddress, toHex } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { compactVerify, createRemoteJWKSet, decodeProtectedHeader } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { bearerToken } from './x402.js';

/** Verifiable executions (docs/spec-notes.md 2.2 `proof`, `jwks_url`; docs/decisions.md "Proofs and receipts") on a real anvil payment chain and Redis. */

const t = useTestGateway();
const sha256 = (v: unknown) => createHash('sha256').update(canonicalize(v)).digest('hex');

describe('receipt keys', () => {
  it('serves a cacheable JWKS with the Ed25519 and secp256k1 keys, each with kid, use and alg', async () => {
    const res = await fetch(`${t.url}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    const jwks = (await res.json()) as { keys: Record<string, string>[] };
    expect(jwks.keys.map((k) => [k.kty, k.crv, k.use, k.alg])).toEqual([
      ['OKP', 'Ed25519', 'sig', 'EdDSA'],
      ['EC', 'secp256k1', 'sig', 'ES256K'],
    ]);
    for (const k of jwks.keys) {
      expect(k.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(k).not.toHaveProperty('d');
    }
  });

  it('sets proof and jwks_url on every executable capability, and null proof elsewhere', async () => {
    const doc = (await fetch(`${t.url}/gateway-catalog.json`).then((r) => r.json())) as any;
    const byId = Object.fromEntries(doc.capabilities.map((c: any) => [c.id, c]));
    expect(byId['intelligence.wallet_balances']).toMatchObject({ proof: 'jws-eddsa', jwks_url: `${t.url}/.well-known/jwks.json` });
    expect(byId['gateway.registry'].proof).toBeNull();
  });
});

describe('execution proofs', () => {
  const input = { address: '0x90F79bf6EB2c4f870365E785982E1f101E93b906', chain: 'base' };
  let body: any;
  let buyer: (typeof t.stack.payment.buyers)[number];
  let paid: Response;

  beforeAll(async () => {
    buyer = t.stack.payment.buyers[4];
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: buyer as never });
    const res = await wrapFetchWithPayment(fetch, client)(t.executeUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ capability_id: 'intelligence.wallet_balances', input }),
    });
    expect(res.status).toBe(200);
    paid = res;
    body = await res.json();
  });

  /** The address of the JWKS's secp256k1 key (x402 offers and receipts are signed by it). */
  async function receiptSigner(): Promise<string> {
    const jwks = (await fetch(`${t.url}/.well-known/jwks.json`).then((r) => r.json())) as { keys: Record<string, string>[] };
    const k = jwks.keys.find((key) => key.crv === 'secp256k1')!;
    return getAddress(publicKeyToAddress(toHex(Buffer.concat([Buffer.from([4]), Buffer.from(k.x, 'base64url'), Buffer.from(k.y, 'base64url')]))));
  }

  it('every 402 carries EIP-712 offers signed by the JWKS secp256k1 key, one per accepts entry, with the same terms', async () => {
    const signer = await receiptSigner();
    for (const [path, payload] of [
      ['/api/v1/execute', { capability_id: 'intelligence.wallet_balances', input }],
      [
        '/api/v1/jobs',
        {
          objective: 'x',
          budget_usdc: 0.01,
          capabilities: ['intelligence.wallet_balances'],
          steps: [{ capability_id: 'intelligence.wallet_balances', input }],
        },
      ],
    ] as const) {
      const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
      expect(res.status).toBe(402);
      const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
      const offers = extractOffersFromPaymentRequired(required) as EIP712SignedOffer[];
      expect(offers).toHaveLength(required.accepts.length);
      for (const [i, offer] of offers.entries()) {
        const verified = await verifyOfferSignatureEIP712(offer);
        expect(getAddress(verified.signer)).toBe(signer);
        const a = required.accepts[i];
        expect(verified.payload).toMatchObject({
          resourceUrl: `${t.url}${path}`,
          scheme: a.scheme,
          network: a.network,
          asset: a.asset,
          payTo: a.payTo,
          amount: a.amount,
        });
      }
      // the JSON body carries the same extensions
      expect(((await res.json()) as any).extensions['offer-receipt'].info.offers).toEqual(offers);
    }
  });

  it('a successful PAYMENT-RESPONSE carries a receipt signed by the same key, naming the payer and the settlement', async () => {
    const receipt = extractReceiptFromResponse(paid) as EIP712SignedReceipt;
    expect(receipt).toBeDefined();
    const verified = await verifyReceiptSignatureEIP712(receipt);
    expect(getAddress(verified.signer)).toBe(await receiptSigner());
    expect(verified.payload).toMatchObject({
      payer: buyer.address,
      network: 'eip155:8453',
      resourceUrl: t.executeUrl,
      transaction: body.payment.tx_hash,
    });
  });

  it('a paid execute answers with a JWS proof that jose verifies against the catalog jwks_url, hashing the input and the result', async () => {
    const doc = (await fetch(`${t.url}/gateway-catalog.json`).then((r) => r.json())) as any;
    const jwksUrl = doc.capabilities.find((c: any) => c.id === 'intelligence.wallet_balances').jwks_url;
    expect(decodeProtectedHeader(body.proof)).toMatchObject({ alg: 'EdDSA' });
    const { payload } = await compactVerify(body.proof, createRemoteJWKSet(new URL(jwksUrl)));
    const claims = JSON.parse(new TextDecoder().decode(payload));
    expect(claims).toMatchObject({
      execution_id: body.execution_id,
      capability_id: 'intelligence.wallet_balances',
      input_sha256: sha256(input),
      result_sha256: sha256(body.result),
      payment: { network: 'eip155:8453', payer: buyer.address, tx_hash: body.payment.tx_hash, amount: '1000' },
      provider: null,
    });
    // one changed byte of the result no longer matches the signed hash
    const tampered = structuredClone(body.result);
    const balance: string = tampered.native.balance;
    tampered.native.balance = `${balance.slice(0, -1)}${balance.endsWith('0') ? '1' : '0'}`;
    expect(sha256(tampered)).not.toBe(claims.result_sha256);
    // and a changed signature does not verify
    const [h, p, s] = body.proof.split('.');
    await expect(
      compactVerify(`${h}.${p}.${s.slice(0, 10)}${s[10] === 'A' ? 'B' : 'A'}${s.slice(11)}`, createRemoteJWKSet(new URL(jwksUrl))),
    ).rejects.toThrow();
  });

  it('GET /api/v1/executions/{id} is readable by the payer only, with its proof', async () => {
    const path = `${t.url}/api/v1/executions/${body.execution_id}`;
    // without credentials: 402 with a sign-in-with-x challenge (signInWithX.int.test.ts signs in with it)
    expect((await fetch(path)).status).toBe(402);
    const other = await fetch(path, { headers: { authorization: `Bearer ${await bearerToken(t.url, t.stack.payment.buyers[5])}` } });
    expect(other.status).toBe(404);
    const mine = await fetch(path, { headers: { authorization: `Bearer ${await bearerToken(t.url, buyer)}` } });
    expect(mine.status).toBe(200);
    expect(await mine.json()).toMatchObject({ execution_id: body.execution_id, status: 'SUCCEEDED', proof: body.proof, payer: buyer.address });
  });
});
