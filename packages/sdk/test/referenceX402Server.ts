/**
 * The official x402 resource server, for the SDK's scheme tests (and reusable by the bench): express 5 +
 * `@x402/express` `paymentMiddleware` + `x402ResourceServer` with the official `@x402/evm` `exact`, `upto`
 * and `batch-settlement` server schemes, settling through the official `x402Facilitator` (`@x402/core`) with
 * the official `@x402/evm` facilitator schemes, on a real anvil payment chain (`@acg/devnet`'s
 * `setupPaymentChain`: Circle USDC, Permit2 and the dev builds of the x402 contracts of
 * `@acg/x402-contracts`). Batch-settlement channels live in a private real Redis through the official
 * `RedisChannelStorage`. Nothing official is changed: this file only wires the parts together.
 *
 * Routes: `POST /paid` and `GET /paid` (the same route for each method) offer the schemes of
 * `schemes`, in that order, at `price` (`exact`, `batch-settlement`) or up to `ceiling` (`upto`). The
 * handler answers `{ok: true, scheme}`; a request with header `x-charge: <base units>` settles that amount
 * (`setSettlementOverrides`: below the `upto` ceiling, or the charge of a `batch-settlement` voucher).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolveRedis, setupPaymentChain, startAnvil, type AnvilInstance, type PaymentChainInfo, type RedisHandle } from '@acg/devnet';
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchFacilitatorScheme } from '@x402/evm/batch-settlement/facilitator';
import { BatchSettlementEvmScheme as BatchServerScheme, type BatchSettlementChannelManager } from '@x402/evm/batch-settlement/server';
import { RedisChannelStorage } from '@x402/evm/batch-settlement/server/redis-storage';
import { registerExactEvmScheme as registerExactFacilitator } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme as ExactServerScheme } from '@x402/evm/exact/server';
import { UptoEvmScheme as UptoFacilitatorScheme } from '@x402/evm/upto/facilitator';
import { UptoEvmScheme as UptoServerScheme } from '@x402/evm/upto/server';
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from '@x402/express';
import { declareEip2612GasSponsoringExtension } from '@x402/extensions';
import express from 'express';
import { Redis } from 'ioredis';
import { createWalletClient, http, publicActions } from 'viem';

/** A scheme the reference server can offer. */
export type ReferenceScheme = 'exact' | 'upto' | 'batch-settlement';

/** Options of {@link startReferenceX402Server}. */
export interface ReferenceX402ServerOptions {
  /** Schemes offered, in the order of the 402's `accepts` (default all three, `exact` first). */
  schemes?: readonly ReferenceScheme[];
  /** Price of `exact` and of one `batch-settlement` voucher, integer USDC base units (default 1000 = 0.001 USDC). */
  price?: bigint;
  /** `upto` ceiling, integer USDC base units (default 10000 = 0.01 USDC). */
  ceiling?: bigint;
  /** Declare the `eip2612GasSponsoring` extension on `upto` (a buyer without a Permit2 allowance signs an EIP-2612 permit instead). Default false. */
  eip2612GasSponsoring?: boolean;
  /** An existing payment chain to use (default: a fresh anvil, chain id 8453, stopped by `close`). */
  payment?: PaymentChainInfo;
  /** Channel `withdrawDelay`, seconds (default the contract minimum, 900). */
  withdrawDelay?: number;
}

/** A running reference server; `close()` stops the HTTP server, the Redis and the anvil it started. */
export interface ReferenceX402Server {
  url: string;
  payment: PaymentChainInfo;
  /** The `payTo` of every scheme (the chain's treasury, dev account 1). */
  payTo: `0x${string}`;
  /** The official batch-settlement channel manager: `claim()`, `settle()`, `refund()` of the server side. */
  channels: BatchSettlementChannelManager;
  /** The official server channel storage (Redis). */
  channelStorage: RedisChannelStorage;
  close(): Promise<void>;
}

/** The node-redis shaped client `RedisChannelStorage` takes, over ioredis (the project's Redis client). */
function redisStorageClient(redis: Redis) {
  return {
    get: (key: string) => redis.get(key),
    set: (key: string, value: string, o?: { NX?: true; PX?: number }) => {
      if (o?.NX && o.PX !== undefined) return redis.set(key, value, 'PX', o.PX, 'NX');
      if (o?.NX) return redis.set(key, value, 'NX');
      if (o?.PX !== undefined) return redis.set(key, value, 'PX', o.PX);
      return redis.set(key, value);
    },
    del: (key: string) => redis.del(key),
    eval: (script: string, o: { keys: string[]; arguments: string[] }) => redis.eval(script, o.keys.length, ...o.keys, ...o.arguments),
    scanIterator: async function* (o: { MATCH?: string; COUNT?: number }) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', o.MATCH ?? '*', 'COUNT', o.COUNT ?? 100);
        cursor = next;
        yield keys;
      } while (cursor !== '0');
    },
  };
}

/**
 * Starts the reference server on 127.0.0.1 (a free port) with a fresh anvil payment chain (unless
 * `payment` is given) and a private Redis.
 *
 * @throws what anvil, Redis or the official server's start-up throws (e.g. a facilitator that does not support a scheme).
 */
export async function startReferenceX402Server(opts: ReferenceX402ServerOptions = {}): Promise<ReferenceX402Server> {
  const schemes = opts.schemes ?? ['exact', 'upto', 'batch-settlement'];
  const price = opts.price ?? 1_000n;
  const ceiling = opts.ceiling ?? 10_000n;
  let anvil: AnvilInstance | undefined;
  let redisHandle: RedisHandle | undefined;
  let redis: Redis | undefined;
  try {
    if (!opts.payment) anvil = await startAnvil({ chainId: 8453 });
    const payment = opts.payment ?? (await setupPaymentChain(anvil!.rpcUrl));
    const { network } = payment;
    redisHandle = await resolveRedis({ preferPrivate: true, persistence: 'none' });
    redis = new Redis(redisHandle.url, { lazyConnect: false, maxRetriesPerRequest: 1 });

    // The official facilitator: dev account 0 pays the gas and signs as the channels' receiverAuthorizer.
    const wallet = createWalletClient({ account: payment.facilitator, chain: payment.chain, transport: http(payment.rpcUrl) }).extend(publicActions);
    // viem 2.57's verifyTypedData accepts a wider union than @x402/evm 2.27's signer type declares: cast.
    type SignerInput = Parameters<typeof toFacilitatorEvmSigner>[0];
    const signer = toFacilitatorEvmSigner({ ...wallet, address: payment.facilitator.address } as unknown as SignerInput);
    const facilitator = new x402Facilitator();
    registerExactFacilitator(facilitator, { signer, networks: [network] });
    facilitator.register(network, new UptoFacilitatorScheme(signer));
    facilitator.register(network, new BatchFacilitatorScheme(signer, payment.facilitator));
    const facilitatorClient = facilitator as unknown as FacilitatorClient;

    const payTo = payment.treasury.address;
    const channelStorage = new RedisChannelStorage({ client: redisStorageClient(redis), keyPrefix: 'refx402' });
    const batch = new BatchServerScheme(payTo, { storage: channelStorage, ...(opts.withdrawDelay ? { withdrawDelay: opts.withdrawDelay } : {}) });
    const resourceServer = new x402ResourceServer(facilitatorClient)
      .register(network, new ExactServerScheme())
      .register(network, new UptoServerScheme())
      .register(network, batch);
    const asset = { asset: payment.usdc, extra: { name: 'USD Coin', version: '2' } };
    const accepts = schemes.map((scheme) => ({
      scheme,
      network,
      payTo,
      maxTimeoutSeconds: 300,
      price: { amount: String(scheme === 'upto' ? ceiling : price), ...asset },
    }));
    const route = {
      accepts,
      description: 'reference x402 resource',
      mimeType: 'application/json',
      ...(opts.eip2612GasSponsoring ? { extensions: declareEip2612GasSponsoringExtension() } : {}),
    };

    const app = express();
    app.disable('x-powered-by');
    app.use(express.json());
    app.use(paymentMiddleware({ 'POST /paid': route, 'GET /paid': route }, resourceServer));
    const handler = (req: express.Request, res: express.Response) => {
      const charge = req.header('x-charge');
      if (charge !== undefined) setSettlementOverrides(res, { amount: charge });
      res.json({ ok: true });
    };
    app.post('/paid', handler);
    app.get('/paid', handler);

    const server: Server = createServer(app);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = redis;
    const rh = redisHandle;
    return {
      url,
      payment,
      payTo,
      channels: batch.createChannelManager(facilitatorClient, network, payment.usdc),
      channelStorage,
      close: async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        r.disconnect();
        await rh.stop();
        await anvil?.stop();
      },
    };
  } catch (e) {
    redis?.disconnect();
    await redisHandle?.stop();
    await anvil?.stop();
    throw e;
  }
}
