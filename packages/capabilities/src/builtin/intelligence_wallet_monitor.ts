import { WalletMonitorSubscriptionCreated, WalletMonitorSubscriptionRequest, type ProblemDetails } from '@acg/schemas';
import type { z } from 'zod';
import { defineCapability } from '../define.js';
import { EXAMPLE_ADDRESS } from './examples.js';

/** Body of `POST /v1/wallet-monitor`: `{addresses (≤ 1000), chains, events, webhook_url, confirmations? (0..64, default 0)}`. */
export type WalletMonitorParameters = z.input<typeof WalletMonitorSubscriptionRequest>;
/** 201 `{subscription_id, expires_at (UNIX seconds), secret (whsec_..., shown once)}`. */
export type WalletMonitorReturnType = z.infer<typeof WalletMonitorSubscriptionCreated>;
/** 400 bad body or webhook URL, 401 no bearer token, 402 empty metered account. */
export type WalletMonitorErrorType = ProblemDetails;

/**
 * `intelligence.wallet_monitor`: transfer events of watched wallets delivered by Standard
 * Webhooks, 0.001 USDC (1000 base units) per delivered (2xx) event, debited from the bearer's
 * metered account. Not executable through `/api/v1/execute`.
 *
 * @example
 * // POST {base_url}/v1/wallet-monitor with Authorization: Bearer <token>
 * { "addresses": ["0x3C44…93BC"], "chains": ["base"], "events": ["transfer_in"], "webhook_url": "https://agent.example.com/hooks/wallet" }
 */
export const walletMonitor = defineCapability({
  id: 'intelligence.wallet_monitor',
  product: 'intelligence',
  name: 'Wallet monitor',
  description:
    "Delivers transfer_in and transfer_out events of watched wallets on Ethereum, Base and Arbitrum by webhook, about 450 ms after block confirmation (or after the subscription's confirmations); a delivered event whose transfer a reorg removes is followed by the same event with removed: true (free), and its charge is credited back.",
  surface: 'WEBHOOK',
  auth: 'bearer',
  method: 'POST',
  endpoint: '{base_url}/v1/wallet-monitor',
  docs: '{base_url}/openapi.json',
  built: true,
  x402: 'planned',
  price: { base_units: 1_000n, unit: 'event' },
  input: WalletMonitorSubscriptionRequest,
  output: WalletMonitorSubscriptionCreated,
  example: {
    request: {
      addresses: [EXAMPLE_ADDRESS],
      chains: ['base'],
      events: ['transfer_in', 'transfer_out'],
      webhook_url: 'https://agent.example.com/hooks/wallet',
    },
    response: {
      subscription_id: 'sub_01JD5X0Q6Z8R3M2N4P5Q6R7S8T',
      expires_at: 1767225600,
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    },
  },
  notes:
    'Sign in (POST {base_url}/v1/auth/nonce, /v1/auth/token) and send Authorization: Bearer <token>. 0.001 USDC is debited from the metered account per delivered (2xx) event. ' +
    'Webhooks follow Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) with the whsec_ secret returned once; retries over about 27 h, then dead letters (GET/POST {base_url}/v1/wallet-monitor/{sub_id}/dead-letters[/replay]). ' +
    'confirmations (0..64, default 0) holds each event until that many blocks are mined on top of its block; an event reorged out before then is never delivered. ' +
    'A delivered event whose transfer a reorg removes is followed by the same event with removed: true and original_webhook_id (signed and retried alike, not billed), and its 0.001 USDC is credited back. ' +
    'The subscription renews by 30 days at expires_at while the account holds at least 0.001 USDC; cancel with POST {base_url}/v1/wallet-monitor/{sub_id}/cancel.',
});
