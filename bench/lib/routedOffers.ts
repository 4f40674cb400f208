/**
 * A routed capability for the bench's `upto` row. The gateway offers x402 `upto` only where a call's
 * cost is known afterwards: a capability whose route's offers ask different prices, or a quote
 * (docs/decisions.md "Payment schemes"). So two providers offer one contract here, as third parties do:
 *
 * - each is a `@acg/provider-kit` provider (`createProvider`: Standard Webhooks check, zod input and
 *   output, EIP-191 signed results) listening on 127.0.0.1 in the bench process, onboarded through the
 *   gateway's public API (`onboard`: EIP-191 challenge, register);
 * - the cheap one creates the contract `intelligence.bench_wallet_balances` at 0.001 USDC, the dear one
 *   joins it (`capability_id`) at 0.002 USDC;
 * - both run the work of `intelligence.wallet_balances` (the same input and output schemas and `run`:
 *   native and USDC balances at one block, one Multicall3 read) on the bench's payment chain;
 * - each is probed until live, so the route has both offers: its 402 asks 0.002 (the highest price) and
 *   offers `upto` with that ceiling after `exact`. A call routed `prefer: cheapest` is answered by the
 *   cheap offer, so an `upto` payment settles 0.001 of the 0.002 authorized, with no refund transaction.
 *
 * The gateway must accept http endpoints on loopback (`walletMonitor.webhookPolicy: 'development'`).
 */
import { walletBalances, type WalletBalancesInput, type WalletBalancesOutput } from '@acg/capabilities';
import type { DevStack } from '@acg/devnet';
import { createProvider, defineProviderCapability, onboard, toOffer, type RunningProvider } from '@acg/provider-kit';
import { createPublicClient, http, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { TestGateway } from '../../apps/gateway/test/harness.js';

/** The contract the two providers offer. */
export const ROUTED_CAPABILITY = 'intelligence.bench_wallet_balances';
/** The answering (cheapest) offer's price, USDC base units: what an `upto` payment settles. */
export const ROUTED_USED_UNITS = 1000n;
/** The dearer offer's price, USDC base units: the route's highest price, the `upto` ceiling. */
export const ROUTED_CEILING_UNITS = 2000n;
/** The request body's routing: the cheapest offer answers (docs/marketplace.md "Routing"). */
export const ROUTED_ROUTING = { prefer: 'cheapest' } as const;

/**
 * The work both providers (and the reference's handler) run: `intelligence.wallet_balances`'s `run` (one
 * Multicall3 read at one block) on the bench's payment chain, for an input its schema already parsed.
 */
export function walletBalancesWork(stack: DevStack): (input: WalletBalancesInput) => Promise<WalletBalancesOutput> {
  const { rpcUrl, chain } = stack.payment;
  const client = createPublicClient({ chain, transport: http(rpcUrl, { timeout: 10_000, retryCount: 1 }), batch: { multicall: false } });
  const deps = { chainClient: () => client as unknown as PublicClient };
  return (input) => walletBalances.run(input, deps);
}

/** The two providers of {@link ROUTED_CAPABILITY}, registered and live at the gateway. */
export interface RoutedOffers {
  capabilityId: string;
  /** The provider ids, cheapest first. */
  providerIds: [string, string];
  close(): Promise<void>;
}

/**
 * Starts both providers, onboards them at `gw` and probes them until their offers are live.
 *
 * @throws {Error} when onboarding fails (e.g. the gateway refuses http endpoints) or an offer is not live after its probes.
 */
export async function startRoutedOffers(gw: TestGateway): Promise<RoutedOffers> {
  const work = walletBalancesWork(gw.stack);
  const capability = (price_usdc: string) =>
    defineProviderCapability({
      name: 'bench_wallet_balances',
      description: 'Native ETH and USDC balances of an address at one block (the bench: a routed copy of intelligence.wallet_balances).',
      price_usdc,
      input: walletBalances.input,
      output: walletBalances.output,
      example_request: { address: gw.stack.payment.buyers[0].address, chain: 'base' },
      run: (input) => work(input),
    });
  const running: RunningProvider[] = [];
  try {
    const ids: string[] = [];
    for (const [name, price, join] of [
      ['Bench Cheap', '0.001', false],
      ['Bench Dear', '0.002', true],
    ] as const) {
      const account = privateKeyToAccount(generatePrivateKey());
      const cap = capability(price);
      const provider = createProvider({ capabilities: [cap], account });
      const listening = await provider.listen(0);
      running.push(listening);
      // the first creates the contract (name), the second joins it (capability_id), as `npm start`'s second provider does
      const { name: _n, product: _p, ...offer } = toOffer(cap);
      const registered = join
        ? await onboard({ gatewayUrl: gw.url, account, endpoint: listening.url, name, offers: [{ ...offer, capability_id: ROUTED_CAPABILITY }] })
        : await onboard({ gatewayUrl: gw.url, account, endpoint: listening.url, name, provider });
      if (join) provider.setSigningSecret(registered.signing_secret);
      ids.push(registered.provider_id);
    }
    await gw.gateway.services.providers.directory.reload();
    // a joined offer is routed once its probes make it live (docs/trust-v1.md "Probes")
    for (const id of ids) for (let i = 0; i < 3; i++) await gw.gateway.prober.probeProvider(id);
    const offers = await gw.gateway.services.providers.directory.route(ROUTED_CAPABILITY, { ...ROUTED_ROUTING, max_price: null });
    if (!offers?.ok || offers.offers.length !== 2) {
      const why = !offers ? 'no such contract' : offers.ok ? `${offers.offers.length} routable offer(s)` : offers.reason;
      throw new Error(`the routed capability's two offers are not both live after their probes: ${why}`);
    }
    return {
      capabilityId: ROUTED_CAPABILITY,
      providerIds: [ids[0], ids[1]],
      close: async () => {
        await Promise.all(running.map((r) => r.close()));
      },
    };
  } catch (e) {
    await Promise.all(running.map((r) => r.close()));
    throw e;
  }
}
