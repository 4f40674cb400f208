/**
 * The example provider as its own process (`node --import tsx apps/example-provider/src/main.ts`,
 * or `node dist/example-provider.js`): reads the environment (see `config.ts`), serves its
 * capabilities on `EXAMPLE_PROVIDER_HOST:EXAMPLE_PROVIDER_PORT`, then onboards through the
 * gateway's public API at `GATEWAY_URL` like any third party, retrying while the gateway is not
 * ready. Logs are pino JSON lines on stdout with `service: "example-provider"`. When started with
 * a Node IPC channel (`npm start` does), it also sends its parent one message per step, whatever
 * the log level: `{event: "listening", url, address, capabilities}`, then
 * `{event: "registered", provider_id, created, capabilities}`, or per failed attempt
 * `{event: "onboarding_retry" | "onboarding_failed", status, detail, ...}`.
 * `EXAMPLE_PROVIDER_JOIN` makes it join those contracts (`capability_id`) rather than create them,
 * at `EXAMPLE_PROVIDER_PRICE_USDC` and `EXAMPLE_PROVIDER_DELAY_MS` slower (`offers.ts`).
 * SIGINT, SIGTERM and the loss of that channel (parent gone) close the server and exit 0; a bad
 * environment exits 2.
 */
import { guardProcess } from '@acg/env';
import { createProvider } from '@acg/provider-kit';
import { createLogger } from '@acg/observability';
import { privateKeyToAccount } from 'viem/accounts';
import { exampleCapabilities } from './capabilities/index.js';
import { chainReaders } from './chains.js';
import { exampleProviderConfig } from './config.js';
import { exampleOffers } from './offers.js';
import { onboardWithRetry } from './onboarding.js';

const { config, problems } = exampleProviderConfig(process.env);
if (!config) {
  process.stderr.write(
    `example-provider: invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${problems.map((p) => `  ${p}`).join('\n')}\n`,
  );
  process.exit(2);
}

// the services' logger: JSON lines (LOG_PRETTY=1: pino-pretty lines, as npm start sets) with URLs and secret values redacted (docs/operating.md → Logs)
const log = createLogger({ service: 'example-provider', level: config.logLevel, pretty: config.logPretty });
const account = privateKeyToAccount(config.privateKey);
// EXAMPLE_PROVIDER_JOIN: the same code joins existing contracts (capability_id) instead of creating them
const { capabilities, offers } = exampleOffers(exampleCapabilities(config.rpcUrls), {
  join: config.join,
  priceUsdc: config.priceUsdc,
  delayMs: config.delayMs,
});
const provider = createProvider({ capabilities, account, log });
const stopOnboarding = new AbortController();
let close: (() => Promise<void>) | undefined;
let stopping = false;

async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    stopOnboarding.abort();
    await close?.().catch(() => undefined);
  }
  process.exit(code);
}
guardProcess(log, () => stop(1));
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
process.on('disconnect', () => void stop(0));
/** Tells the parent (when started with an IPC channel) what happened; a no-op otherwise. */
const tell = (message: object) => {
  if (process.connected) process.send?.(message);
};

// a wrong RPC (another chain behind the URL) makes every answer wrong: say so at once
for (const reader of chainReaders(config.rpcUrls).values()) {
  reader.client.getChainId().then(
    (id) => {
      if (id !== reader.chainId) log.warn({ chain: reader.name, expected: reader.chainId, got: id }, 'the RPC URL serves another chain');
    },
    () => log.warn({ chain: reader.name }, 'the RPC URL does not answer yet'),
  );
}

try {
  const running = await provider.listen(config.port, config.host);
  close = running.close;
  const endpoint = config.publicUrl ?? running.url;
  const listening = { event: 'listening', url: endpoint, address: account.address, capabilities: [...provider.capabilities.keys()] };
  log.info(listening, 'example provider listening');
  tell(listening);
  const registered = await onboardWithRetry(
    { gatewayUrl: config.gatewayUrl, account, endpoint, name: config.name, offers },
    { log, signal: stopOnboarding.signal, report: tell },
  );
  if (registered) {
    provider.setSigningSecret(registered.signing_secret);
    const done = { event: 'registered', provider_id: registered.provider_id, created: registered.created, capabilities: registered.capabilities };
    log.info(done, registered.created ? 'registered with the gateway' : 'updated its registration with the gateway (signing secret rotated)');
    tell(done);
  }
} catch (e) {
  const err = e as NodeJS.ErrnoException;
  const why = err.code === 'EADDRINUSE' ? `EXAMPLE_PROVIDER_PORT=${config.port}: port already in use` : String(err?.message ?? e);
  process.stderr.write(`example-provider failed to start: ${why}\n`);
  await stop(1);
}
