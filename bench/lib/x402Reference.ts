/**
 * The reference x402 server for a payment scheme, built only from the official packages, unchanged:
 * express 5 + `@x402/express` `paymentMiddleware` + `x402ResourceServer` with the scheme's official EVM
 * server scheme, and an in-process facilitator (`x402Facilitator` of `@x402/core` with the scheme's
 * official EVM facilitator scheme). Generic over the route and its handler, so a test or another
 * benchmark can stand up "what a plain x402 server does" for `exact`, `upto` or `batch-settlement` on
 * the dev payment chain (`@acg/devnet` `setupPaymentChain`: USDC, Permit2 and our dev builds of the x402
 * contracts at their canonical addresses; packages/x402-contracts/README.md).
 *
 * - the facilitator of every scheme: `createInProcessFacilitator` of `@acg/payments` (`x402Facilitator`
 *   with the official exact, upto and batch-settlement EVM facilitator schemes, unchanged).
 * - `exact`: `registerExactEvmScheme` (`@x402/evm/exact/server`; EIP-3009 `transferWithAuthorization`).
 * - `upto`: `UptoEvmScheme` of `@x402/evm/upto/server` and `@x402/evm/upto/facilitator` (Permit2
 *   `permitWitnessTransferFrom` through `x402UptoPermit2Proxy`); the route authorizes a ceiling and the
 *   handler settles what it used with `setSettlementOverrides` (`@x402/express`).
 * - `batch-settlement`: `BatchSettlementEvmScheme` of `@x402/evm/batch-settlement/server` (channels in its
 *   `InMemoryChannelStorage`) and `@x402/evm/batch-settlement/facilitator` (the facilitator account also
 *   signs as the channels' `receiverAuthorizer`); vouchers are checked by the server, and
 *   {@link X402Reference.claimAndSettle} claims them on chain in batches (the scheme's
 *   `BatchSettlementChannelManager`).
 *
 * The facilitator sends through `ChainSender` of `@acg/treasury` (one send at a time at the chain's
 * `pending` nonce) from dev account 0.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { devPrivateKey, type DevStack } from '@acg/devnet';
import { createInProcessFacilitator } from '@acg/payments';
import { BatchSettlementEvmScheme as BatchServerScheme, InMemoryChannelStorage } from '@x402/evm/batch-settlement/server';
import { registerExactEvmScheme } from '@x402/evm/exact/server';
import { UptoEvmScheme as UptoServerScheme } from '@x402/evm/upto/server';
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from '@x402/express';
import express, { type Request, type Response } from 'express';
import { createWalletClient, http, maxUint256, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/** The x402 payment schemes the bench compares (x402 `PaymentRequirements.scheme`). */
export const PAYMENT_SCHEMES = ['exact', 'upto', 'batch-settlement'] as const;
export type PaymentScheme = (typeof PAYMENT_SCHEMES)[number];

export interface X402ReferenceOptions {
  stack: DevStack;
  scheme: PaymentScheme;
  /** Express route key, e.g. `POST /api/v1/execute`. */
  route: `${'GET' | 'POST'} /${string}`;
  /**
   * Price in USDC base units (6 decimals) per call: what `exact` and `batch-settlement` charge, and what
   * `upto` settles when the handler does not say otherwise.
   */
  priceUnits: bigint;
  /** `upto` only: the ceiling the buyer authorizes, USDC base units (default 2 x priceUnits). */
  ceilingUnits?: bigint;
  description: string;
  /**
   * The paid handler. For `upto` it returns the amount used (USDC base units, at most the ceiling), which
   * is settled; undefined settles `priceUnits`. It must answer the request itself.
   */
  handler: (req: Request, res: Response) => Promise<bigint | undefined>;
}

export interface X402Reference {
  url: string;
  server: Server;
  scheme: PaymentScheme;
  /** The facilitator's sending account (dev account 0): pays gas, and for `upto` is `witness.facilitator`. */
  facilitatorAddress: `0x${string}`;
  /**
   * `batch-settlement` only: claims every claimable voucher in batches and transfers the claimed funds to
   * the receiver (payTo). Returns the number of vouchers claimed and the transactions sent. Other schemes:
   * nothing to do (zero, empty).
   */
  claimAndSettle(): Promise<{ vouchers: number; transactions: string[] }>;
  close(): Promise<void>;
}

/** `$0.001`-style price of `units` USDC base units, for the x402 route config. */
function dollars(units: bigint): string {
  return `$${(Number(units) / 1e6).toFixed(6)}`;
}

/**
 * Starts the reference server for `opts.scheme` on 127.0.0.1 (a free port), guarding `opts.route` at the
 * given price on the dev payment chain, paid to the treasury (dev account 1).
 *
 * @throws {Error} when the port cannot be bound; the middleware's facilitator sync fails on the first request.
 */
export async function startX402Reference(opts: X402ReferenceOptions): Promise<X402Reference> {
  const { stack, scheme } = opts;
  const { rpcUrl, treasury, network, usdc } = stack.payment;
  // x402Facilitator with the official exact, upto and batch-settlement EVM facilitator schemes
  const facilitator = createInProcessFacilitator({ rpcUrl, chain: stack.payment.chain, signer: devPrivateKey(0), networks: [network] });
  let resourceServer: x402ResourceServer;
  let batch: BatchServerScheme | undefined;
  if (scheme === 'exact') {
    resourceServer = new x402ResourceServer(facilitator);
    registerExactEvmScheme(resourceServer, { networks: [network] });
  } else if (scheme === 'upto') {
    resourceServer = new x402ResourceServer(facilitator).register(network, new UptoServerScheme());
  } else {
    batch = new BatchServerScheme(treasury.address, { storage: new InMemoryChannelStorage() });
    resourceServer = new x402ResourceServer(facilitator).register(network, batch);
  }
  const chargedUnits = scheme === 'upto' ? (opts.ceilingUnits ?? 2n * opts.priceUnits) : opts.priceUnits;

  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb' }));
  app.use(
    paymentMiddleware(
      {
        [opts.route]: {
          accepts: { scheme, price: dollars(chargedUnits), network, payTo: treasury.address, maxTimeoutSeconds: scheme === 'batch-settlement' ? 3600 : 300 },
          description: opts.description,
          mimeType: 'application/json',
        },
      },
      resourceServer,
    ),
  );
  const [method, path] = opts.route.split(' ') as ['GET' | 'POST', string];
  app[method === 'GET' ? 'get' : 'post'](path, async (req, res) => {
    if (scheme !== 'upto') {
      await opts.handler(req, res);
      return;
    }
    // upto: the amount used is known only once the handler has run; it must be set before the answer is sent
    const end = res.end.bind(res);
    let used: bigint | undefined;
    const answered = new Promise<void>((resolve) => {
      res.end = ((...args: Parameters<typeof res.end>) => {
        setSettlementOverrides(res, { amount: String(used ?? opts.priceUnits) });
        resolve();
        return end(...args);
      }) as typeof res.end;
    });
    used = (await opts.handler(req, res)) ?? undefined;
    await answered;
  });

  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const manager = batch?.createChannelManager(facilitator, network, usdc);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    scheme,
    facilitatorAddress: facilitator.address,
    async claimAndSettle() {
      if (!manager) return { vouchers: 0, transactions: [] };
      const r = await manager.claimAndSettle();
      return {
        vouchers: r.claims.reduce((a, c) => a + c.vouchers, 0),
        transactions: [...r.claims.map((c) => c.transaction), ...(r.settle ? [r.settle.transaction] : [])],
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Each buyer's one-time ERC-20 `approve(Permit2, max)` of USDC, which the `upto` scheme (Permit2) needs
 * before its first payment; waits for the receipts. Idempotent (approving again changes nothing).
 */
export async function approvePermit2(stack: DevStack, buyerIndexes: readonly number[]): Promise<void> {
  const { rpcUrl, chain, usdc, permit2 } = stack.payment;
  const abi = [
    {
      type: 'function',
      name: 'approve',
      stateMutability: 'nonpayable',
      inputs: [
        { name: 'spender', type: 'address' },
        { name: 'value', type: 'uint256' },
      ],
      outputs: [{ type: 'bool' }],
    },
  ] as const;
  await Promise.all(
    buyerIndexes.map(async (i) => {
      const wallet = createWalletClient({ account: privateKeyToAccount(devPrivateKey(i)), chain, transport: http(rpcUrl) }).extend(publicActions);
      const hash = await wallet.writeContract({ address: usdc, abi, functionName: 'approve', args: [permit2, maxUint256] });
      await wallet.waitForTransactionReceipt({ hash });
    }),
  );
}
