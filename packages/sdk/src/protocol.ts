/**
 * Pure parsing and checking of what the gateway sends: problem details, 402 challenges, and the
 * match between a challenge and the terms `/registry` advertises. No I/O here.
 */
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { chooseRequirement, registryTerms } from './chooseRequirement.js';
import type { Capability, PaymentRequired, PaymentRequirements, ProblemDetails, ProblemIssue } from './types.js';

/** CAIP-2 id of the payment chain, Base (docs/spec-notes.md 2.9). */
export const PAYMENT_NETWORK = 'eip155:8453';

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/** Parses JSON text, or returns undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function issuesOf(v: unknown): ProblemIssue[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.filter(isObject).map((i) => ({
    path: Array.isArray(i.path) ? i.path.filter((p): p is string | number => typeof p === 'string' || typeof p === 'number') : [],
    message: typeof i.message === 'string' ? i.message : JSON.stringify(i),
    ...(typeof i.code === 'string' ? { code: i.code } : {}),
  }));
}

/**
 * Reads an error response as RFC 9457 problem details. A well-formed problem body is kept as is
 * (extension members such as `execution_id` and `refund` included); anything else (HTML from a
 * proxy, plain text, empty) becomes `{type: "about:blank", title, status, detail}` with the
 * first 200 characters of the text as `detail`. `status` always comes from the HTTP status.
 */
export function parseProblem(status: number, bodyText: string): ProblemDetails {
  const body = parseJson(bodyText);
  const title = REASONS[status] ?? `HTTP ${status}`;
  if (isObject(body)) {
    const detail =
      typeof body.detail === 'string' ? body.detail : typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : '';
    const errors = issuesOf(body.errors);
    return {
      ...body,
      type: typeof body.type === 'string' && body.type ? body.type : 'about:blank',
      title: typeof body.title === 'string' && body.title ? body.title : title,
      status,
      detail,
      ...(errors ? { errors } : {}),
    };
  }
  const text = bodyText.replace(/\s+/g, ' ').trim().slice(0, 200);
  return { type: 'about:blank', title, status, detail: text };
}

/**
 * The x402 v2 PaymentRequired of a 402 answer: decoded from the `PAYMENT-REQUIRED` header
 * (base64 JSON), else taken from the JSON body when it holds `x402Version` 2 and `accepts`.
 * Returns undefined when neither is present or valid.
 */
export function readPaymentRequired(header: string | null | undefined, body: unknown): PaymentRequired | undefined {
  if (header) {
    try {
      const decoded = decodePaymentRequiredHeader(header.trim()) as unknown;
      if (isPaymentRequired(decoded)) return decoded;
    } catch {
      // fall through to the body
    }
  }
  if (isPaymentRequired(body)) {
    const { x402Version, error, resource, accepts, extensions } = body;
    return { x402Version, ...(error !== undefined ? { error } : {}), resource, accepts, ...(extensions ? { extensions } : {}) };
  }
  return undefined;
}

function isPaymentRequired(v: unknown): v is PaymentRequired {
  return isObject(v) && v.x402Version === 2 && Array.isArray(v.accepts) && v.accepts.every(isObject) && isObject(v.resource);
}

/** Options of {@link selectRequirement}. */
export interface TermsCheck {
  /** CAIP-2 network payments must be made on (default `eip155:8453`). */
  network?: string;
}

/**
 * The highest price `/registry` advertises for a capability, integer USDC base units
 * (`x402.maxAmountRequired`, else `price_base_units`), or undefined when the price is not fixed.
 */
export function advertisedPrice(capability: Capability): bigint | undefined {
  const raw = capability.x402?.maxAmountRequired ?? capability.price_base_units;
  return typeof raw === 'string' && /^\d+$/.test(raw) ? BigInt(raw) : undefined;
}

/**
 * Picks the first requirement of a challenge's `accepts` that matches what `/registry`
 * advertises for `capability`: x402Version 2, scheme `exact`, the expected network
 * (`eip155:8453`) which is also the registry's, the registry's USDC `asset` and `payTo`
 * (case-insensitive), and an integer `amount` not above the advertised price.
 *
 * Returns the requirement and its amount (integer USDC base units).
 * Throws {@link PaymentTermsMismatchError} listing why each requirement was rejected (or that the
 * registry advertises no x402 payment for the capability).
 */
export function selectRequirement(
  capability: Capability,
  paymentRequired: PaymentRequired,
  opts: TermsCheck = {},
): { requirement: PaymentRequirements; amount: bigint } {
  const terms = registryTerms(capability);
  return chooseRequirement({ paymentRequired, network: opts.network ?? PAYMENT_NETWORK, assets: [terms.asset!], terms, label: capability.id });
}
