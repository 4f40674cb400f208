import { z } from 'zod';
import { Address, Caip2Network, JsonObject, UintString, Uri } from './primitives.js';

/** The x402 protocol version this gateway speaks: 2 (docs/spec-notes.md 2.9, 9). */
export const X402_VERSION = 2 as const;

/**
 * x402 v2 `ResourceInfo`: `url` of the paid resource, optional `description` and `mimeType`
 * (docs/decisions.md "x402 payments"; matches `@x402/core`).
 */
export const ResourceInfo = z.object({
  url: Uri,
  description: z.string().optional(),
  mimeType: z.string().optional(),
});
export type ResourceInfo = z.infer<typeof ResourceInfo>;

/**
 * x402 v2 `PaymentRequirements` (one entry of `accepts`, matches `@x402/core`): `scheme` `exact`
 * (always the first entry), `upto` (a ceiling, for a call whose cost is known only afterwards;
 * docs/decisions.md "Payment schemes") or `batch-settlement` (a channel voucher; docs/decisions.md
 * "batch-settlement"), `network` CAIP-2, `amount` (integer string, asset base units), `asset` (token contract),
 * `payTo`, `maxTimeoutSeconds` (validity window of the authorization), `extra` (scheme data, e.g.
 * the EIP-712 domain `{name: "USD Coin", version: "2"}`).
 */
export const PaymentRequirements = z.object({
  scheme: z.enum(['exact', 'upto', 'batch-settlement']),
  network: Caip2Network,
  amount: UintString,
  asset: Address,
  payTo: Address,
  maxTimeoutSeconds: z.int().positive(),
  extra: JsonObject,
});
export type PaymentRequirements = z.infer<typeof PaymentRequirements>;

/**
 * The x402 v2 `PaymentRequired` members that follow `x402Version` (matches `@x402/core`), shared by
 * the HTTP 402 body ({@link PaymentChallenge}) and a paid MCP tool's answer (`X402PaymentRequired`,
 * ./mcp.ts): `error` (why payment is required or was refused), `resource` ({@link ResourceInfo}),
 * `accepts` (>= 1 {@link PaymentRequirements}), optional `extensions`, and `reason`, the stable
 * snake_case code of a refused payment (x402's `invalidReason` where there is one). A zod shape
 * for `.extend()` (which keeps the key order in the inferred type, where a spread would not).
 */
export const paymentRequiredFields = {
  error: z.string().optional(),
  resource: ResourceInfo,
  accepts: z.array(PaymentRequirements).min(1),
  extensions: JsonObject.optional(),
  reason: z.string().optional(),
};

/**
 * Body of a 402 response (docs/spec-notes.md 2.9 + docs/decisions.md "x402 payments"). spec fields: `scheme` (`exact`),
 * `network` (`eip155:8453`), `payTo`, `maxAmountRequired` (integer string, USDC base units),
 * `asset` (USDC contract), `x402Version` (2). x402 v2 fields, so official clients work too:
 * `error` (why payment is required or was refused), `resource`, `accepts` (>= 1 requirement;
 * the first mirrors the spec fields), optional `extensions`. A refused payment adds `reason`, a
 * stable snake_case code (x402's `invalidReason` where there is one).
 */
export const PaymentChallenge = z
  .object({
    x402Version: z.literal(X402_VERSION),
    scheme: z.literal('exact'),
    network: Caip2Network,
    payTo: Address,
    maxAmountRequired: UintString,
    asset: Address,
  })
  .extend(paymentRequiredFields);
export type PaymentChallenge = z.infer<typeof PaymentChallenge>;
