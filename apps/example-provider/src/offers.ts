import { toOffer, type ProviderCapability } from '@acg/provider-kit';

/** An offer as `POST /api/v1/providers` takes it (schema `ProviderOffer` of `@acg/schemas`). */
export type ExampleOffer = ReturnType<typeof toOffer>;

/** What decides the example provider's offers (its `EXAMPLE_PROVIDER_JOIN`, `EXAMPLE_PROVIDER_PRICE_USDC`, `EXAMPLE_PROVIDER_DELAY_MS`). */
export interface ExampleOfferOptions {
  /** Capability ids whose contracts it joins, offering only those; undefined: it creates a contract per capability. */
  join?: readonly string[];
  /** Price of every offer, decimal USDC; undefined: each capability's own. */
  priceUsdc?: string;
  /** Extra milliseconds before each answer (0: none). */
  delayMs?: number;
}

/**
 * The capabilities the example provider serves and the offers it registers (docs/marketplace.md
 * "Contracts and offers"). Without `join`, every capability creates its contract (`name`,
 * `product`). With `join`, only the named capabilities are served, and each offer carries
 * `capability_id` instead of `name`/`product`: the same code offers an existing contract a second
 * time, at `priceUsdc` and `delayMs` slower, as `npm start`'s second provider does.
 *
 * @throws {Error} when `join` names a capability this provider does not have.
 */
export function exampleOffers(
  all: readonly ProviderCapability[],
  opts: ExampleOfferOptions = {},
): { capabilities: ProviderCapability[]; offers: ExampleOffer[] } {
  const unknown = (opts.join ?? []).filter((id) => !all.some((c) => c.id === id));
  if (unknown.length > 0) throw new Error(`EXAMPLE_PROVIDER_JOIN: no such capability here: ${unknown.join(', ')} (known: ${all.map((c) => c.id).join(', ')})`);
  const chosen = opts.join ? all.filter((c) => opts.join?.includes(c.id)) : [...all];
  const delayMs = opts.delayMs ?? 0;
  const capabilities = chosen.map((c): ProviderCapability => {
    const priced = opts.priceUsdc ? { ...c, price_usdc: opts.priceUsdc } : c;
    if (delayMs <= 0) return priced;
    return {
      ...priced,
      run: async (input, ctx) => {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        return c.run(input, ctx);
      },
    };
  });
  const offers = capabilities.map((c) => {
    const offer = toOffer(c);
    if (!opts.join) return offer;
    const { name: _name, product: _product, ...rest } = offer;
    return { ...rest, capability_id: c.id };
  });
  return { capabilities, offers };
}
