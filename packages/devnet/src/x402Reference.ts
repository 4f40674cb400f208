/**
 * The reference x402 resource server: "what a plain x402 server does", built only from the official
 * packages, unchanged, on the dev payment chain. One implementation for every caller: the SDK's scheme
 * tests (packages/sdk/test/schemes.int.test.ts) pay it, and the bench (bench/execute.ts) measures the
 * gateway against it on the same scheme.
 *
 * - HTTP: express 5 + `@x402/express` `paymentMiddleware` + `x402ResourceServer`, guarding `routes`.
 * - Server schemes, one `accepts` entry each, in the order of `schemes`:
 *   - `exact`: `ExactEvmScheme` of `@x402/evm/exact/server` (EIP-3009 `transferWithAuthorization`);
 *   - `upto`: `UptoEvmScheme` of `@x402/evm/upto/server` (Permit2 `permitWitnessTransferFrom` through
 *     `x402UptoPermit2Proxy`): the buyer authorizes `ceiling`, the handler's `charge` is settled
 *     (`setSettlementOverrides` of `@x402/express`);
 *   - `batch-settlement`: `BatchSettlementEvmScheme` of `@x402/evm/batch-settlement/server`, channels in
 *     `channelStorage` (default the official `InMemoryChannelStorage`); vouchers are checked by the
 *     server, and {@link X402Reference.channels} (the scheme's `BatchSettlementChannelManager`) claims
 *     them on chain.
 * - Facilitator: `createInProcessFacilitator` of `@acg/payments` (`x402Facilitator` of `@x402/core` with
 *   the official exact, upto and batch-settlement EVM facilitator schemes, unchanged, sending through
 *   `ChainSender` from the chain's facilitator account, dev account 0; that account also signs as the
 *   channels' `receiverAuthorizer` and is `witness.facilitator` of `upto`). It is the gateway's own
 *   facilitator code, so on the bench both sides pay gas the same way.
 * - Chain: a {@link PaymentChainInfo} from `setupPaymentChain` (USDC, Permit2 and our dev builds of the
 *   x402 contracts at their canonical addresses; packages/x402-contracts/README.md). `payTo` is the
 *   chain's treasury (dev account 1).
 *
 * Only loaded through the subpath `@acg/devnet/x402Reference` (it needs express and `@acg/payments`,
 * which the rest of this package does not).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInProcessFacilitator } from '@acg/payments';
import {
  BatchSettlementEvmScheme as BatchServerScheme,
  InMemoryChannelStorage,
  type BatchSettlementChannelManager,
  type ChannelStorage,
} from '@x402/evm/batch-settlement/server';
import { ExactEvmScheme as ExactServerScheme } from '@x402/evm/exact/server';
import { UptoEvmScheme as UptoServerScheme } from '@x402/evm/upto/server';
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from '@x402/express';
import { declareEip2612GasSponsoringExtension } from '@x402/extensions';
import express, { type Request } from 'express';
import type { PaymentChainInfo } from './paymentChain.js';

/** The x402 payment schemes the reference server can offer (x402 `PaymentRequirements.scheme`), `exact` first. */
export const REFERENCE_SCHEMES = ['exact', 'upto', 'batch-settlement'] as const;
/** One of {@link REFERENCE_SCHEMES}. */
export type ReferenceScheme = (typeof REFERENCE_SCHEMES)[number];

/** An express route key of the paid resource, e.g. `POST /api/v1/execute`. */
export type ReferenceRoute = `${'GET' | 'POST'} /${string}`;

/** What a paid route's handler answers: HTTP status, JSON body, and the amount to settle. */
export interface ReferenceAnswer {
  /** HTTP status (default 200). The middleware settles only a status below 400. */
  status?: number;
  /** Sent as JSON. */
  body: unknown;
  /**
   * USDC base units to settle instead of the requirement's amount (`setSettlementOverrides`): for
   * `upto`, what the call used (at most the ceiling); for `batch-settlement`, this voucher's charge.
   * Undefined: the requirement's amount (the price; for `upto` the whole ceiling). Not for `exact`,
   * which always settles its price.
   */
  charge?: bigint;
}

/** A paid route's handler: runs after the middleware verified the payment, before it settles. */
export type ReferenceHandler = (req: Request) => ReferenceAnswer | Promise<ReferenceAnswer>;

/** Options of {@link startX402Reference}. */
export interface X402ReferenceOptions {
  /** The dev payment chain (`setupPaymentChain`, or a `DevStack`'s `payment`). */
  payment: PaymentChainInfo;
  /** Schemes offered, in the order of the 402's `accepts` (default all three, `exact` first). */
  schemes?: readonly ReferenceScheme[];
  /** Paid routes, all with the same requirements and handler (default `POST /paid` and `GET /paid`). */
  routes?: readonly ReferenceRoute[];
  /** Price of `exact` and of one `batch-settlement` voucher, integer USDC base units (default 1000 = 0.001 USDC). */
  price?: bigint;
  /** `upto`: the ceiling the buyer authorizes, integer USDC base units (default 10 x `price`). */
  ceiling?: bigint;
  /** The 402's `resource.description` (default `reference x402 resource`). */
  description?: string;
  /**
   * The paid handler (default: `{ok: true}`, and a request header `x-charge: <base units>` becomes the
   * answer's `charge`).
   */
  handler?: ReferenceHandler;
  /** `maxTimeoutSeconds` of every requirement (default 300). */
  maxTimeoutSeconds?: number;
  /** `batch-settlement` channel storage of the server (default the official `InMemoryChannelStorage`). */
  channelStorage?: ChannelStorage;
  /** `batch-settlement` channel `withdrawDelay`, seconds (default the scheme's, the contract minimum 900). */
  withdrawDelay?: number;
  /** Declare the `eip2612GasSponsoring` extension on the routes (an `upto` buyer without a Permit2 allowance signs an EIP-2612 permit instead). Default false. */
  eip2612GasSponsoring?: boolean;
}

/** A running reference server (see the module's description); `close()` stops its HTTP server. */
export interface X402Reference {
  /** `http://127.0.0.1:<port>` (routes are under it). */
  url: string;
  server: Server;
  payment: PaymentChainInfo;
  /** The `payTo` of every scheme: the chain's treasury (dev account 1). */
  payTo: `0x${string}`;
  /** The facilitator's sending account (dev account 0): pays gas, `witness.facilitator` of `upto`, the channels' `receiverAuthorizer`. */
  facilitatorAddress: `0x${string}`;
  /** `batch-settlement`: the official channel manager of the server side (`claim`, `settle`, `claimAndSettle`, `refund`). */
  channels: BatchSettlementChannelManager;
  /** `batch-settlement`: the server's channel storage. */
  channelStorage: ChannelStorage;
  close(): Promise<void>;
}

/** The default handler: `{ok: true}`, charging the request's `x-charge` header when it has one. */
const defaultHandler: ReferenceHandler = (req) => {
  const charge = req.header('x-charge');
  return { body: { ok: true }, charge: charge === undefined ? undefined : BigInt(charge) };
};

/**
 * Starts the reference server on 127.0.0.1 (a free port), guarding `routes` on `payment`'s chain.
 *
 * @throws {Error} when the port cannot be bound. A facilitator that does not support a scheme fails on the
 * first request (the middleware's facilitator sync).
 *
 * @example
 * const ref = await startX402Reference({ payment: stack.payment, schemes: ['upto'], price: 1000n, ceiling: 2000n });
 * // POST `${ref.url}/paid` answers 402; paid with the official upto client it settles the handler's charge
 */
export async function startX402Reference(opts: X402ReferenceOptions): Promise<X402Reference> {
  const { payment } = opts;
  const { network } = payment;
  const schemes = opts.schemes ?? REFERENCE_SCHEMES;
  const price = opts.price ?? 1_000n;
  const ceiling = opts.ceiling ?? 10n * price;
  const handler = opts.handler ?? defaultHandler;
  const facilitator = createInProcessFacilitator({ rpcUrl: payment.rpcUrl, chain: payment.chain, signer: payment.facilitator, networks: [network] });
  const payTo = payment.treasury.address;
  const channelStorage = opts.channelStorage ?? new InMemoryChannelStorage();
  const batch = new BatchServerScheme(payTo, { storage: channelStorage, ...(opts.withdrawDelay ? { withdrawDelay: opts.withdrawDelay } : {}) });
  const resourceServer = new x402ResourceServer(facilitator)
    .register(network, new ExactServerScheme())
    .register(network, new UptoServerScheme())
    .register(network, batch);
  const asset = { asset: payment.usdc, extra: { name: 'USD Coin', version: '2' } };
  const route = {
    accepts: schemes.map((scheme) => ({
      scheme,
      network,
      payTo,
      maxTimeoutSeconds: opts.maxTimeoutSeconds ?? 300,
      price: { amount: String(scheme === 'upto' ? ceiling : price), ...asset },
    })),
    description: opts.description ?? 'reference x402 resource',
    mimeType: 'application/json',
    ...(opts.eip2612GasSponsoring ? { extensions: declareEip2612GasSponsoringExtension() } : {}),
  };
  const routes = opts.routes ?? ['POST /paid', 'GET /paid'];

  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb' }));
  app.use(paymentMiddleware(Object.fromEntries(routes.map((r) => [r, route])), resourceServer));
  for (const r of routes) {
    const [method, path] = r.split(' ') as ['GET' | 'POST', string];
    app[method === 'GET' ? 'get' : 'post'](path, async (req, res) => {
      const answer = await handler(req);
      // before the answer is sent: the middleware settles when the handler's response ends
      if (answer.charge !== undefined) setSettlementOverrides(res, { amount: answer.charge.toString() });
      res.status(answer.status ?? 200).json(answer.body);
    });
  }

  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    payment,
    payTo,
    facilitatorAddress: facilitator.address,
    channels: batch.createChannelManager(facilitator, network, payment.usdc),
    channelStorage,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
