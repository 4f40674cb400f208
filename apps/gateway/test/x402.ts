import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '@acg/devnet';
import { requestHash } from '@acg/payments';
import { encodePaymentSignatureHeader, decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createPublicClient, erc20Abi, http, toHex, type LocalAccount } from 'viem';
import { randomBytes } from 'node:crypto';

/** POSTs JSON and returns status, headers and parsed body. */
export async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, contentType: res.headers.get('content-type') };
}

/**
 * POSTs `body` as JSON to `url`, paid by `buyer` with the official x402 fetch client (the 402
 * challenge first, then the paid retry), and returns the last answer's status, headers and parsed
 * body (undefined when empty).
 */
export async function paidPost(buyer: LocalAccount, url: string, body: unknown): Promise<{ status: number; headers: Headers; body: any }> {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: buyer as never });
  const res = await wrapFetchWithPayment(fetch, client)(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** The `POST /api/v1/execute` body of `intelligence.wallet_balances` for `address` on `chain` (default `base`). */
export const walletBalancesRequest = (address: string, chain = 'base') => ({ capability_id: 'intelligence.wallet_balances', input: { address, chain } });

/** Asks for the 402 challenge of `body` and decodes its PAYMENT-REQUIRED header. */
export async function challenge(url: string, body: unknown): Promise<PaymentRequired> {
  const r = await post(url, body);
  if (r.status !== 402) throw new Error(`expected 402, got ${r.status}`);
  return decodePaymentRequiredHeader(r.headers.get('payment-required')!);
}

/**
 * A valid PaymentPayload for `paymentRequired`, made by the official x402 client. Like the SDK, it
 * carries a fresh x402 `payment-identifier` id when the 402 declares the extension and the caller
 * set none (`paymentRequired` is not changed): a resend of the same payload then proves the payer.
 * {@link asReadOnChain} strips it, as an attacker rebuilding the payload from the chain would.
 */
export async function officialPayload(account: LocalAccount, paymentRequired: PaymentRequired): Promise<PaymentPayload> {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account as never });
  const declared = paymentRequired.extensions?.['payment-identifier'] as { info?: { id?: string } } | undefined;
  if (!declared || declared.info?.id) return client.createPaymentPayload(paymentRequired);
  const id = `pay_${randomBytes(16).toString('hex')}`;
  return client.createPaymentPayload({
    ...paymentRequired,
    extensions: { ...paymentRequired.extensions, 'payment-identifier': { ...declared, info: { ...declared.info, id } } },
  });
}

/** The PaymentPayload as anyone can rebuild it from a settled transfer: the accepted terms, the authorization and its signature; no extensions. */
export function asReadOnChain(p: PaymentPayload): PaymentPayload {
  return { x402Version: p.x402Version, accepted: p.accepted, payload: JSON.parse(JSON.stringify(p.payload)) };
}

/**
 * A hand-made exact-scheme payload: `signer` signs an authorization from `from` (default: signer)
 * with the given overrides, so tests can forge, expire, underpay or misdirect it.
 */
export async function craftPayload(
  signer: LocalAccount,
  requirements: PaymentRequirements,
  chainId: number,
  o: { from?: `0x${string}`; to?: `0x${string}`; value?: bigint; validAfter?: bigint; validBefore?: bigint; nonce?: `0x${string}` } = {},
): Promise<PaymentPayload> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: o.from ?? signer.address,
    to: o.to ?? (requirements.payTo as `0x${string}`),
    value: o.value ?? BigInt(requirements.amount),
    validAfter: o.validAfter ?? now - 600n,
    validBefore: o.validBefore ?? now + 300n,
    nonce: o.nonce ?? toHex(randomBytes(32)),
  };
  const signature = await signer.signTypedData({
    domain: { name: 'USD Coin', version: '2', chainId, verifyingContract: requirements.asset as `0x${string}` },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  return {
    x402Version: 2,
    accepted: requirements,
    payload: {
      signature,
      authorization: {
        from: authorization.from,
        to: authorization.to,
        value: authorization.value.toString(),
        validAfter: authorization.validAfter.toString(),
        validBefore: authorization.validBefore.toString(),
        nonce: authorization.nonce,
      },
    },
  };
}

/** The header value of a payload. */
export const paymentHeader = (p: PaymentPayload) => encodePaymentSignatureHeader(p);

/**
 * A paid `POST /api/v1/execute` of `intelligence.wallet_balances` (on `buyer`'s own address, chain
 * `base`) to hand straight to the gateway's paywall (`services.paywall.handle(req, run)`): `body` (the
 * JSON request), `header` (`buyer`'s PAYMENT-SIGNATURE for the live challenge at `baseUrl`, also for
 * HTTP replays) and `req` (the paywall request; `price`: USDC base units, `operationId`: the execution id).
 */
export async function paidExecuteRequest(baseUrl: string, buyer: LocalAccount, opts: { price: bigint; operationId: string }) {
  const body = walletBalancesRequest(buyer.address);
  const header = paymentHeader(await officialPayload(buyer, await challenge(`${baseUrl}/api/v1/execute`, body)));
  const req = {
    resourceUrl: `${baseUrl}/api/v1/execute`,
    description: 'Execute intelligence.wallet_balances',
    price: opts.price,
    route: 'execute',
    requestHash: requestHash('POST', 'execute', body),
    operationId: opts.operationId,
    getHeader: (name: string) => (name === 'payment-signature' ? header : undefined),
  };
  return { body, header, req };
}

/** USDC balance reader on the dev chain. */
export function usdcReader(rpcUrl: string, usdc: `0x${string}`) {
  const client = createPublicClient({ transport: http(rpcUrl) });
  return (address: `0x${string}`, blockNumber?: bigint) =>
    client.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address], ...(blockNumber === undefined ? {} : { blockNumber }) });
}

const tokens = new Map<string, string>();

/** A Sign-In with Ethereum bearer token of `account` at `baseUrl` (POST /v1/auth/nonce, sign, POST /v1/auth/token), cached per address. */
export async function bearerToken(baseUrl: string, account: LocalAccount): Promise<string> {
  const key = `${baseUrl} ${account.address}`;
  const cached = tokens.get(key);
  if (cached) return cached;
  const nonce = await post(`${baseUrl}/v1/auth/nonce`, { address: account.address });
  const signature = await account.signMessage({ message: nonce.body.message });
  const token = await post(`${baseUrl}/v1/auth/token`, { message: nonce.body.message, signature });
  if (token.status !== 200) throw new Error(`sign-in failed: ${token.status}`);
  tokens.set(key, token.body.access_token);
  return token.body.access_token;
}

/** `GET {path}` at `baseUrl` with `payer`'s bearer token: the response (only the payer reads an execution or a job). */
async function asPayer(baseUrl: string, path: string, payer: LocalAccount): Promise<Response> {
  return fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${await bearerToken(baseUrl, payer)}` } });
}

/** `GET /api/v1/executions/{id}` as the payer (only the payer may read an execution); the parsed body. */
export async function readExecution(baseUrl: string, executionId: string, payer: LocalAccount): Promise<any> {
  return (await asPayer(baseUrl, `/api/v1/executions/${executionId}`, payer)).json();
}

/** `GET /api/v1/jobs/{id}` as the payer (only the payer may read a job); the response. */
export function fetchJob(baseUrl: string, jobId: string, payer: LocalAccount): Promise<Response> {
  return asPayer(baseUrl, `/api/v1/jobs/${jobId}`, payer);
}

/** `GET /api/v1/jobs/{id}` as the payer; the parsed body. */
export async function readJob(baseUrl: string, jobId: string, payer: LocalAccount): Promise<any> {
  return (await fetchJob(baseUrl, jobId, payer)).json();
}
