import type { PaymentRequirements, SettleResponse } from '@x402/core/types';
import {
  createEIP712OfferReceiptIssuer,
  createOfferReceiptExtension,
  declareOfferReceiptExtension,
  OFFER_RECEIPT,
  type SignTypedDataFn,
} from '@x402/extensions/offer-receipt';
import { type PaymentRequiredResponse, withPaymentRequiredExtension } from './paymentRequiredExtension.js';

/** How long a signed offer is valid, seconds (x402 offer-receipt default). */
export const OFFER_VALIDITY_SECONDS = 300;

/**
 * x402's offer-receipt extension (`@x402/extensions/offer-receipt`; docs/decisions.md "Proofs and receipts"):
 * every 402 carries signed offers in `extensions["offer-receipt"].info.offers`, one per `accepts`
 * entry, and every successful settlement response carries a signed receipt (payer, network,
 * resource, issue time and the settlement transaction) in `extensions["offer-receipt"].info.receipt`.
 * Both are EIP-712, signed by the gateway's secp256k1 receipt key (`RECEIPT_SIGNING_KEY`), whose
 * address a verifier derives from the JWKS. A signed offer is reused for a resource and price
 * until half its validity has passed, so a 402 costs a signature at most once per 150 s each.
 */
export class OfferReceipts {
  private readonly extension: ReturnType<typeof createOfferReceiptExtension>;
  private readonly declaration = declareOfferReceiptExtension({ includeTxHash: true, offerValiditySeconds: OFFER_VALIDITY_SECONDS })[OFFER_RECEIPT];
  private readonly cache = new Map<string, { data: unknown; refreshAtMs: number }>();

  /**
   * @param kid the signer's DID, `did:pkh:eip155:<chain id>:<address>`
   * @param signTypedData EIP-712 signing by the receipt key (a viem account's `signTypedData`)
   */
  constructor(
    readonly kid: string,
    signTypedData: SignTypedDataFn,
    private readonly now: () => number = Date.now,
  ) {
    this.extension = createOfferReceiptExtension(createEIP712OfferReceiptIssuer(kid, signTypedData));
  }

  /** The `offer-receipt` extension data of a 402 for `resourceUrl` and `accepts` (cached per resource and terms), or undefined if signing failed. */
  async offers(resourceUrl: string, accepts: readonly PaymentRequirements[]): Promise<unknown> {
    const key = `${resourceUrl}\n${accepts.map((a) => `${a.network}:${a.asset}:${a.payTo}:${a.amount}`).join(',')}`;
    const hit = this.cache.get(key);
    if (hit && hit.refreshAtMs > this.now()) return hit.data;
    const data = await this.extension.enrichPaymentRequiredResponse?.(this.declaration, {
      paymentRequiredResponse: { resource: { url: resourceUrl } },
      requirements: accepts,
    } as never);
    if (data) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(key, { data, refreshAtMs: this.now() + (OFFER_VALIDITY_SECONDS * 1000) / 2 });
    }
    return data;
  }

  /** `response` with the signed offers added to its PaymentRequired, its body and its `PAYMENT-REQUIRED` header. */
  async withOffers(response: PaymentRequiredResponse): Promise<PaymentRequiredResponse> {
    const offers = await this.offers(response.paymentRequired.resource.url, response.paymentRequired.accepts);
    if (!offers) return response;
    return withPaymentRequiredExtension(response, OFFER_RECEIPT, offers);
  }

  /** `settle` with a signed receipt for `resourceUrl` added to its extensions (unchanged when it did not succeed). */
  async withReceipt(resourceUrl: string, settle: SettleResponse): Promise<SettleResponse> {
    if (!settle.success) return settle;
    const data = await this.extension.enrichSettlementResponse?.(this.declaration, {
      result: settle,
      transportContext: { request: { adapter: { getUrl: () => resourceUrl } } },
    } as never);
    return data ? { ...settle, extensions: { ...settle.extensions, [OFFER_RECEIPT]: data } } : settle;
  }
}
