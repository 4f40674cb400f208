import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { authorizationTypes } from '@x402/evm';
import { getAddress, hashTypedData, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';

/**
 * The Python stub's built-in signer (sdk-python-stub/acg_gateway/signer.py) gives byte-for-byte the
 * EIP-712 digest, signature and address viem gives for the same key and TransferWithAuthorization
 * (typed with `authorizationTypes` of @x402/evm, the types x402's exact scheme signs).
 * It needs the optional extra `signer-light` installed (coincurve, pycryptodome; `.ci/run` installs
 * them): without it this test fails and says so.
 */
const STUB = fileURLToPath(new URL('../../../sdk-python-stub/', import.meta.url));
const INSTALL_HINT = 'pip install coincurve pycryptodome (bash .ci/run installs them from the configured index)';

function python(code: string, input?: string) {
  const r = spawnSync('python3', ['-c', code], { cwd: STUB, input, encoding: 'utf8', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
  expect(r.error, 'python3 must be on PATH').toBeUndefined();
  return r;
}

/** The backends the Python side can use here: coincurve always (required), eth-account too when installed. */
function backends(): string[] {
  const probe = python('import coincurve; from Crypto.Hash import keccak');
  expect(probe.status, `The Python signer's libraries are missing: ${INSTALL_HINT}\n${probe.stderr}`).toBe(0);
  return python('import eth_account').status === 0 ? ['coincurve', 'eth-account'] : ['coincurve'];
}

const random = (bytes: number) => BigInt(toHex(randomBytes(bytes)));

describe('Python stub signer', () => {
  it('matches viem: address, EIP-712 digest and signature of TransferWithAuthorization', async () => {
    const names = [
      ['USD Coin', '2'],
      ['Ünïcødé tøken ✓', '1'],
      ['', ''],
    ] as const;
    const cases = [...Array(6)].map((_, i) => {
      const key = generatePrivateKey();
      const from = privateKeyToAccount(key).address;
      const [name, version] = names[i % names.length]!;
      const message = {
        from,
        to: getAddress(toHex(randomBytes(20))),
        value: i === 0 ? 0n : i === 1 ? 2n ** 256n - 1n : random(16),
        validAfter: random(4),
        validBefore: random(5),
        nonce: toHex(randomBytes(32)),
      };
      const domain = { name, version, chainId: i % 2 ? 8453 : 84532, verifyingContract: getAddress(toHex(randomBytes(20))) };
      return { key, domain, message };
    });
    const expected = await Promise.all(
      cases.map(async ({ key, domain, message }) => ({
        address: privateKeyToAccount(key).address,
        digest: hashTypedData({ domain, types: authorizationTypes, primaryType: 'TransferWithAuthorization', message }),
        signature: await privateKeyToAccount(key).signTypedData({ domain, types: authorizationTypes, primaryType: 'TransferWithAuthorization', message }),
      })),
    );

    for (const backend of backends()) {
      const input = cases.map(({ key, domain, message }) => ({
        // lower-case addresses on the Python side: checksumming is its job
        key,
        typed: {
          chain_id: domain.chainId,
          asset: domain.verifyingContract.toLowerCase(),
          name: domain.name,
          version: domain.version,
          authorization: {
            ...message,
            from: message.from.toLowerCase(),
            to: message.to.toLowerCase(),
            value: message.value.toString(),
            validAfter: message.validAfter.toString(),
            validBefore: message.validBefore.toString(),
          },
        },
      }));
      const r = python(
        `import json, sys
from acg_gateway.signer import LocalSigner, transfer_authorization_digest
out = []
for c in json.load(sys.stdin):
    s = LocalSigner(c["key"], backend=${JSON.stringify(backend)})
    out.append({"address": s.address, "digest": "0x" + transfer_authorization_digest(**c["typed"]).hex(), "signature": s.sign_authorization(**c["typed"])})
print(json.dumps(out))`,
        JSON.stringify(input),
      );
      expect(r.status, r.stderr).toBe(0);
      const got = JSON.parse(r.stdout) as { address: string; digest: Hex; signature: Hex }[];
      expect(got, backend).toEqual(expected);
    }
  });

  it('builds the x402 PaymentPayload the official client builds, verifiable with viem', async () => {
    backends();
    const key = generatePrivateKey();
    const account = privateKeyToAccount(key);
    const asset = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
    const payTo = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
    const requirement = {
      scheme: 'exact',
      network: 'eip155:8453',
      asset,
      amount: '1000',
      payTo,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    };
    const pr = { x402Version: 2, resource: { url: 'http://gw.test/api/v1/execute' }, accepts: [requirement], extensions: { bazaar: { info: {} } } };
    const r = python(
      `import base64, json, sys
from acg_gateway.signer import LocalSigner
s = LocalSigner(${JSON.stringify(key)}, backend="coincurve", clock=lambda: 1_800_000_000)
print(base64.b64decode(s(json.load(sys.stdin))).decode())`,
      JSON.stringify(pr),
    );
    expect(r.status, r.stderr).toBe(0);
    const payload = JSON.parse(r.stdout);
    expect(payload).toMatchObject({
      x402Version: 2,
      resource: pr.resource,
      accepted: requirement,
      extensions: pr.extensions,
      payload: {
        authorization: { from: account.address, to: payTo, value: '1000', validAfter: String(1_800_000_000 - 600), validBefore: String(1_800_000_000 + 300) },
      },
    });
    expect(payload.payload.authorization.nonce).toMatch(/^0x[0-9a-f]{64}$/);
    const { authorization, signature } = payload.payload;
    const message = {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    };
    const domain = { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: asset } as const;
    expect(signature).toBe(await account.signTypedData({ domain, types: authorizationTypes, primaryType: 'TransferWithAuthorization', message }));
  });

  it('signs EIP-191 messages (Sign-In with Ethereum) as viem does', async () => {
    const messages = ['hello', '', 'gw.test wants you to sign in with your Ethereum account:\nÜnïcødé ✓\n\nNonce: abc'];
    const keys = [generatePrivateKey(), generatePrivateKey()];
    const expected = await Promise.all(keys.flatMap((key) => messages.map((message) => privateKeyToAccount(key).signMessage({ message }))));
    for (const backend of backends()) {
      const r = python(
        `import json, sys
from acg_gateway.signer import LocalSigner
c = json.load(sys.stdin)
print(json.dumps([LocalSigner(k, backend=${JSON.stringify(backend)}).sign_message(m) for k in c["keys"] for m in c["messages"]]))`,
        JSON.stringify({ keys, messages }),
      );
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout), backend).toEqual(expected);
    }
  });
});
