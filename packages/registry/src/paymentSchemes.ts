/**
 * Which x402 payment scheme suits which caller: the one text the discovery documents (`/llms.txt`), the
 * capability pages (web and MCP resources) and the MCP server instructions share, so they never disagree.
 * `exact` is what every 402 offers; `upto` and `batch-settlement` are described as taken "where the 402
 * offers them" (its `accepts[].scheme`): `upto` where the cost is known only afterwards (executions and
 * MCP capability tools whose route's offers ask different prices, quoted calls, jobs and the MCP job tool), and
 * `batch-settlement`, when the operator turned it on (PAYMENT_SCHEMES), where the price is fixed before
 * the call (executions and MCP tools of built-in capabilities and of single-price provider offers, and
 * quoted calls; docs/decisions.md "batch-settlement").
 * Rules of each scheme: the x402 scheme specifications, and packages/x402-contracts/README.md for the
 * contracts they settle through.
 */

/** One x402 scheme: its `PaymentRequirements.scheme` value, the caller it suits, and how paying works. */
export interface PaymentSchemeGuide {
  scheme: 'exact' | 'upto' | 'batch-settlement';
  /** Whom the scheme suits, one phrase. */
  suits: string;
  /** How the caller pays with it, one sentence. */
  how: string;
}

/** The three schemes, `exact` first (the one every 402 offers). */
export const PAYMENT_SCHEME_GUIDE: readonly PaymentSchemeGuide[] = [
  {
    scheme: 'exact',
    suits: 'one-off calls',
    how: 'any wallet holding USDC (EIP-3009) signs one `transferWithAuthorization` for the price; each call is its own on-chain transfer',
  },
  {
    scheme: 'upto',
    suits: 'calls whose cost is known only afterwards (routed calls over REST or MCP, jobs, quotes)',
    how: "authorize a ceiling (a Permit2 signature for the 402's amount, after a one-time USDC approval of Permit2) and pay only what was used, with no refund transaction",
  },
  {
    scheme: 'batch-settlement',
    suits: 'many small calls from one agent at prices fixed before the call (built-in capabilities, single-price provider offers, quotes)',
    how: 'one deposit opens a channel, each call then carries an off-chain cumulative voucher (no transaction per call), and claims are batched on chain; the unspent deposit is refunded',
  },
];

/** The guide as Markdown bullets, one per scheme (`upto` and `batch-settlement` marked "where the 402 offers it"). */
export function paymentSchemeBullets(): string[] {
  return PAYMENT_SCHEME_GUIDE.map((g) => `- \`${g.scheme}\`${g.scheme === 'exact' ? '' : ' (where the 402 offers it)'}: ${g.suits}. ${capitalize(g.how)}.`);
}

/** The guide in one sentence, for tool descriptions and short pages. */
export function paymentSchemeSentence(): string {
  const [exact, ...others] = PAYMENT_SCHEME_GUIDE;
  return (
    `Schemes: \`${exact.scheme}\` for ${exact.suits}; where the 402 offers them, ` +
    others.map((g) => `\`${g.scheme}\` for ${g.suits}`).join(', and ') +
    '. Pick the entry of `accepts` whose `scheme` suits you.'
  );
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
