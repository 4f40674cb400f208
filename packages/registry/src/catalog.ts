import { z } from 'zod';
import {
  ExecuteRequest,
  ExecutionResponse,
  HealthDocument,
  JobCreated,
  JobRequest,
  LiquidationSearchQuery,
  LiquidationSearchResponse,
  RegistryDocument,
  SendBundleRequest,
  SendBundleResponse,
  WALLET_BALANCES_CHAINS,
  WALLET_BALANCES_ID,
  WalletBalancesInput,
  WalletBalancesOutput,
  WalletMonitorSubscriptionCreated,
  WalletMonitorSubscriptionRequest,
  compareCapabilities,
} from '@acg/schemas';
import type { CapabilityDescriptor } from './descriptor.js';

/** Input of GET endpoints that take no parameters. */
const NoInput = z.strictObject({});

/** A funded dev-chain buyer (anvil test mnemonic index 2), also a valid address on Base. */
const EXAMPLE_ADDRESS = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

const walletBalancesRequest = {
  capability_id: WALLET_BALANCES_ID,
  input: { address: EXAMPLE_ADDRESS, chain: 'base' },
};

const walletBalancesResponse = {
  execution_id: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T',
  status: 'SUCCEEDED',
  result: {
    address: EXAMPLE_ADDRESS,
    chain: 'base',
    chain_id: WALLET_BALANCES_CHAINS.base.chain_id,
    block_number: '24190512',
    native: { symbol: 'ETH', decimals: 18, balance: '10000000000000000000000' },
    usdc: { address: WALLET_BALANCES_CHAINS.base.usdc, decimals: 6, balance: '10000000000' },
  },
  payment: {
    tx_hash: '0x5f2c1e8d3b4a69707182930a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e',
    amount: '1000',
  },
};

/**
 * The static catalog: every capability SPEC 1 describes, ordered by product (gateway, builder,
 * mev, intelligence) then id (SPEC 2.1). Prices are USDC base units (6 decimals). `built: false`
 * means PLANNED; flip it in the change that ships the surface. Nothing here is LIVE: that takes a
 * probe record at build time (DESIGN "Registry, catalog and health").
 */
export const CATALOG: readonly CapabilityDescriptor[] = [
  {
    id: 'gateway.execute',
    product: 'gateway',
    name: 'Execute a capability',
    description:
      'Runs a named capability for the caller and charges its price per call through x402 in USDC on Base. ' +
      'Returns the result together with the on-chain payment receipt.',
    surface: 'REST',
    auth: 'x402',
    method: 'POST',
    endpoint: '{base_url}/api/v1/execute',
    docs: '{base_url}/openapi.json',
    built: true,
    executable: false,
    x402: 'accepted',
    price_base_units: null,
    price_unit: null,
    input: ExecuteRequest,
    output: ExecutionResponse,
    example_request: walletBalancesRequest,
    example_response: walletBalancesResponse,
    related_capabilities: [WALLET_BALANCES_ID],
    notes: 'The price is that of the capability named by capability_id; a request without payment gets 402 with the x402 challenge.',
  },
  {
    id: 'gateway.health',
    product: 'gateway',
    name: 'Health telemetry',
    description: 'Aggregated health of every capability with measured latencies, and the bundle builder infrastructure state.',
    surface: 'REST',
    auth: 'none',
    method: 'GET',
    endpoint: '{base_url}/status/health',
    docs: '{base_url}/openapi.json',
    built: true,
    executable: false,
    x402: 'none',
    price_base_units: 0n,
    price_unit: 'call',
    input: NoInput,
    output: HealthDocument,
    example_request: null,
    example_response: null,
    related_capabilities: ['gateway.registry'],
    notes: 'Cached 10 s on the server, sent with Cache-Control: no-store.',
  },
  {
    id: 'gateway.jobs',
    product: 'gateway',
    name: 'Asynchronous jobs',
    description: 'Runs a long-running objective as a job with a USDC budget, polled until it ends; the unspent budget is refunded.',
    surface: 'REST',
    auth: 'x402',
    method: 'POST',
    endpoint: '{base_url}/api/v1/jobs',
    docs: '{base_url}/openapi.json',
    built: true,
    executable: false,
    x402: 'accepted',
    price_base_units: null,
    price_unit: null,
    input: JobRequest,
    output: JobCreated,
    example_request: {
      objective: 'Read the native and USDC balances of a wallet on Base',
      budget_usdc: 0.01,
      capabilities: [WALLET_BALANCES_ID],
      steps: [{ capability_id: WALLET_BALANCES_ID, input: { address: EXAMPLE_ADDRESS, chain: 'base' } }],
    },
    example_response: null,
    related_capabilities: ['gateway.execute'],
    notes: 'Paid by x402 for budget_usdc; poll GET {base_url}/api/v1/jobs/{job_id}.',
  },
  {
    id: 'gateway.providers',
    product: 'gateway',
    name: 'Provider onboarding',
    description:
      'Lets a third party list its own capabilities behind the gateway with an API endpoint, a USDC wallet on the payment chain and EIP-191 wallet verification.',
    surface: 'REST',
    auth: 'custom',
    method: 'POST',
    endpoint: '{base_url}/api/v1/providers',
    docs: null,
    built: false,
    executable: false,
    x402: 'none',
    price_base_units: null,
    price_unit: null,
    input: null,
    output: null,
    example_request: null,
    example_response: null,
    notes: 'Authentication is an EIP-191 signature over a challenge from POST {base_url}/api/v1/providers/challenge.',
  },
  {
    id: 'gateway.registry',
    product: 'gateway',
    name: 'Capability catalog',
    description: 'This machine-readable catalog of capabilities, readable without authentication.',
    surface: 'REST',
    auth: 'none',
    method: 'GET',
    endpoint: '{base_url}/gateway-catalog.json',
    docs: '{base_url}/llms.txt',
    built: true,
    executable: false,
    x402: 'none',
    price_base_units: 0n,
    price_unit: 'call',
    input: NoInput,
    output: RegistryDocument,
    example_request: null,
    example_response: null,
    related_capabilities: ['gateway.health'],
    notes: 'The legacy shape with prices, schemas and examples is at {base_url}/registry; both are cached 60 s.',
  },
  {
    id: 'builder.send_bundle',
    product: 'builder',
    name: 'Bundle submission',
    description:
      'Accepts Ethereum bundles over JSON-RPC eth_sendBundle for block construction; bids are submitted to four relays under an always-submit policy.',
    surface: 'JSON-RPC',
    auth: 'bundle_signature',
    method: 'POST',
    endpoint: '{builder_url}/rpc',
    docs: null,
    built: true,
    executable: true,
    x402: 'accepted',
    price_base_units: 100_000n,
    price_unit: 'bundle',
    input: SendBundleRequest,
    output: SendBundleResponse,
    example_request: {
      jsonrpc: '2.0',
      method: 'eth_sendBundle',
      params: [{ txs: ['0x02f8b1'], blockNumber: '0x1361bd3' }],
      id: 1,
    },
    example_response: { jsonrpc: '2.0', result: null, id: 1 },
    notes:
      'Header X-Bundle-Signature: <address>:<signature> (EIP-191 over the keccak256 of the body). Settled out-of-band; ' +
      'SPEC target latency about 420 ms p50 and 1200 ms p99. Rate limit 10 requests/s per IP, burst 20.',
  },
  {
    id: 'mev.liquidation_search',
    product: 'mev',
    name: 'Liquidation search',
    description: 'Returns imminent liquidation opportunities on Aave v3, Spark, Compound v3 and Morpho Blue, sorted by estimated profit.',
    surface: 'REST',
    auth: 'bearer',
    method: 'GET',
    endpoint: '{base_url}/v1/liquidation-search',
    docs: '{base_url}/openapi.json',
    built: true,
    executable: true,
    x402: 'accepted',
    price_base_units: 20_000n,
    price_unit: 'call',
    input: LiquidationSearchQuery,
    output: LiquidationSearchResponse,
    example_request: { capability_id: 'mev.liquidation_search', input: { min_profit_usd: 100, chain: 'ethereum' } },
    example_response: {
      execution_id: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8V',
      status: 'SUCCEEDED',
      payment: { tx_hash: '0x7a2c1e8d3b4a69707182930a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7f', amount: '20000' },
      result: {
      chain: 'ethereum',
      block_number: 24190512,
      opportunities: [
        {
          protocol: 'aave_v3',
          borrower: '0x486f27d2B5E3d8b5FD9C0a9b6c3D7a4e8f1b2C3D',
          collateral_token: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2',
          collateral_symbol: 'WETH',
          debt_token: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
          debt_symbol: 'USDC',
          collateral_usd: 80000,
          debt_usd: 68041.24,
          health_factor: 0.97,
          estimated_profit_usd: 1530.12,
          deadline_block: 24190513,
          market: '0x87870Bca3F3fD6335C3F4ce8392D69350B4fA4E2',
          max_repay_amount: '34020618557',
          max_repay_usd: 34020.62,
          gas_cost_usd: 0.81,
        },
      ],
      },
    },
    notes:
      'Examples show POST {base_url}/api/v1/execute; the same query is GET {base_url}/v1/liquidation-search?min_profit_usd=100&chain=ethereum, whose body is the result. ' +
      'GET with query parameters (protocol may be repeated); Authorization: Bearer <token> debits the metered account, or pay per call with x402 (402 challenge). ' +
      'SPEC target latency about 180 ms p50.',
  },
  {
    id: WALLET_BALANCES_ID,
    product: 'intelligence',
    name: 'Wallet balances',
    description: 'Reads the native ETH and USDC balances of an address on Base, Ethereum or Arbitrum at the latest block.',
    surface: 'REST',
    auth: 'x402',
    method: 'POST',
    endpoint: '{base_url}/api/v1/execute',
    docs: '{base_url}/openapi.json',
    built: true,
    executable: true,
    x402: 'accepted',
    price_base_units: 1_000n,
    price_unit: 'call',
    input: WalletBalancesInput,
    output: WalletBalancesOutput,
    example_request: walletBalancesRequest,
    example_response: walletBalancesResponse,
    related_capabilities: ['gateway.execute'],
    notes: 'Call POST /api/v1/execute with capability_id and input; input_schema describes input and output_schema describes result.',
  },
  {
    id: 'intelligence.wallet_monitor',
    product: 'intelligence',
    name: 'Wallet monitor',
    description: 'Delivers transfer_in and transfer_out events of watched wallets on Ethereum, Base and Arbitrum by webhook, about 450 ms after block confirmation.',
    surface: 'WEBHOOK',
    auth: 'bearer',
    method: 'POST',
    endpoint: '{base_url}/v1/wallet-monitor',
    docs: '{base_url}/openapi.json',
    built: true,
    executable: false,
    x402: 'planned',
    price_base_units: 1_000n,
    price_unit: 'event',
    input: WalletMonitorSubscriptionRequest,
    output: WalletMonitorSubscriptionCreated,
    example_request: {
      addresses: [EXAMPLE_ADDRESS],
      chains: ['base'],
      events: ['transfer_in', 'transfer_out'],
      webhook_url: 'https://agent.example.com/hooks/wallet',
    },
    example_response: {
      subscription_id: 'sub_01JD5X0Q6Z8R3M2N4P5Q6R7S8T',
      expires_at: 1767225600,
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    },
    notes:
      'Sign in (POST {base_url}/v1/auth/nonce, /v1/auth/token) and send Authorization: Bearer <token>. 0.001 USDC is debited from the metered account per delivered (2xx) event. ' +
      'Webhooks follow Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) with the whsec_ secret returned once; retries over about 27 h, then dead letters (GET/POST {base_url}/v1/wallet-monitor/{sub_id}/dead-letters[/replay]). ' +
      'The subscription renews by 30 days at expires_at while the account holds at least 0.001 USDC; cancel with POST {base_url}/v1/wallet-monitor/{sub_id}/cancel.',
  },
];

/**
 * The descriptor with this id, from the static catalog and then `extra` (providers registered at
 * run time); undefined when unknown.
 */
export function findCapability(id: string, extra: readonly CapabilityDescriptor[] = []): CapabilityDescriptor | undefined {
  return CATALOG.find((d) => d.id === id) ?? extra.find((d) => d.id === id);
}

/**
 * Descriptors that run through `POST /api/v1/execute` (`executable: true`), static catalog then
 * `extra`, in catalog order. Each has non-null `input`/`output` zod schemas and a price.
 */
export function executableCapabilities(extra: readonly CapabilityDescriptor[] = []): CapabilityDescriptor[] {
  return [...CATALOG, ...extra].filter((d) => d.executable).sort(compareCapabilities);
}
