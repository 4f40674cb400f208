import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CapabilityDefinition } from '@acg/capabilities';
import type { OfferScorer, ProviderEarnings } from '@acg/provider-directory';
import { loadReceipts } from '@acg/receipts';
import { OfferReceipts } from '@acg/payments';
import type { Worker } from 'bullmq';
import { createLogger } from '@acg/observability';
import type { Logger } from 'pino';
import type { GatewayConfig } from '@acg/config';
import { createRequestListener } from './http/server.js';
import { answerOutsideRequests, HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, TIMEOUT_CHECK_INTERVAL_MS, UNPARSED_ROUTE } from './http/socketProblem.js';
import { probeSpecs } from './probeSpecs.js';
import { Prober } from './probes.js';
import { createServices, startRefunds, type Services } from './services.js';
import { startDeferredRecovery, startDeferredSettlements } from './paidRoute/deferredRecovery.js';
import { checkStoreDurability, type StoreDurabilityCheck } from './storeDurability.js';

/** A running gateway: its URL, services, and `close()` that stops everything it started. */
export interface RunningGateway {
  url: string;
  server: Server;
  services: Services;
  prober: Prober;
  /** The store's durability as read at start and what the gateway made of it (docs/durability.md). */
  store: StoreDurabilityCheck;
  close(): Promise<void>;
}

export interface StartGatewayOptions {
  log?: Logger;
  /** Run the refund worker in this process (default true when a treasury key is configured). */
  refundWorker?: boolean;
  /**
   * HTTP timeouts, ms (answered 408 problem+json): the request head within `headersTimeoutMs`
   * (default {@link HEADERS_TIMEOUT_MS}, 10 s), the whole request within `requestTimeoutMs`
   * (default {@link REQUEST_TIMEOUT_MS}, 30 s). Tests shorten them.
   */
  http?: { headersTimeoutMs?: number; requestTimeoutMs?: number };
  /** Run the prober in this process (default true). */
  prober?: boolean;
  /** Capability definitions served besides the built-ins (`defineCapability` of @acg/capabilities): listed in every document and executable when they have `run`. */
  capabilities?: readonly CapabilityDefinition[];
  /** Where provider shares are credited (the provider ledger). */
  earnings?: ProviderEarnings;
  /** Trust scores of provider offers (docs/marketplace.md "Trust scores"); default: the success-rate scorer. */
  offerScorer?: OfferScorer;
}

/**
 * Starts the gateway HTTP server (docs/spec-notes.md 4): connects Redis, checks the store's
 * durability (docs/durability.md), initializes the x402 facilitator, starts the refund worker and
 * the prober, listens, and resolves once it accepts requests.
 * Throws if the facilitator cannot be reached or the port is taken, and `StoreNotDurableError`
 * (nothing left running) when the store can lose acknowledged writes outside the dev defaults
 * without ALLOW_NON_DURABLE_STORE.
 */
export async function startGateway(config: GatewayConfig, opts: StartGatewayOptions = {}): Promise<RunningGateway> {
  const log = opts.log ?? createLogger({ service: 'gateway', level: config.logLevel, pretty: config.logPretty });
  const services = createServices(config, log, { capabilities: opts.capabilities, earnings: opts.earnings, offerScorer: opts.offerScorer });
  let store: StoreDurabilityCheck;
  try {
    await services.redis.ping();
    // before any payment can be taken: a store that can lose acknowledged writes is refused outside the dev defaults
    store = await checkStoreDurability(services.redis, config.store, log.child({ module: 'store' }));
  } catch (e) {
    await services.close().catch(() => undefined);
    throw e;
  }
  await services.paywall.init();
  if (config.receipts) {
    services.receipts = await loadReceipts(config.receipts, `eip155:${config.payment.chain.id}`);
    services.proofs = services.receipts.proofs;
    const signer = services.receipts.signing.account;
    // x402 offer-receipt: EIP-712 offers in every 402, a receipt in every successful PAYMENT-RESPONSE
    services.paywall.useOfferReceipts(
      new OfferReceipts(`did:pkh:eip155:${config.payment.chain.id}:${signer.address}`, (typed) => signer.signTypedData(typed as never)),
    );
  }
  // provider capabilities: loaded before the first request, then followed through pub/sub
  await services.providers.directory.start(services.redis.duplicate());

  const refundWorker: Worker | undefined = (opts.refundWorker ?? true) ? startRefunds(services) : undefined;
  // x402 `upto` settlements a crashed gateway recorded but did not send (packages/payments README "Payment schemes")
  const stopDeferredRecovery = startDeferredRecovery(services);
  // an ended `upto` job's settlement, settled as soon as the worker recorded it (docs/decisions.md "Payment schemes", jobs)
  const stopDeferredSettlements = await startDeferredSettlements(services, services.redis.duplicate());

  // slow clients are bounded: the head within 10 s, the whole request within 30 s, else 408 (docs/operating.md: HTTP timeouts)
  const server = createServer(
    {
      headersTimeout: opts.http?.headersTimeoutMs ?? HEADERS_TIMEOUT_MS,
      requestTimeout: opts.http?.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
    createRequestListener(services),
  );
  const httpLog = log.child({ module: 'http' });
  answerOutsideRequests(server, ({ method, status, ip }) => {
    services.metrics.http.observe(UNPARSED_ROUTE, method ?? 'other', status, 0);
    httpLog.info({ method: method ?? null, route: UNPARSED_ROUTE, status, ip }, 'request refused before parsing');
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host}:${port}`;
  services.setListenUrl(url);

  const prober = new Prober({
    redis: services.redis,
    keys: services.keys,
    store: services.probes,
    telemetry: services.telemetry,
    baseUrl: services.publicBaseUrl,
    specs: () => probeSpecs(services),
    log: log.child({ module: 'prober' }),
    onProbed: () => services.discovery.invalidate(),
  });
  services.providers.probe = (providerId) => prober.probeProvider(providerId);
  if (opts.prober ?? true) await prober.start(config.probeIntervalSeconds);

  return {
    url,
    server,
    services,
    prober,
    store,
    async close() {
      prober.stop();
      stopDeferredRecovery();
      stopDeferredSettlements();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await refundWorker?.close();
      await services.close();
    },
  };
}
