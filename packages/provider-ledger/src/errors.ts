/**
 * Why a dispute operation was refused (docs/decisions.md "Providers"; the gateway maps each to a status):
 * - `not_found` (404): no such execution or dispute, not a provider execution, or the caller is not
 *   its payer / provider (never revealed);
 * - `window_passed` (409): the dispute window of the execution has passed (or its share left `held`);
 * - `already_disputed` (409): the execution has a dispute already (`disputeId` names it);
 * - `closed` (409): the dispute is resolved already.
 */
export type DisputeErrorReason = 'not_found' | 'window_passed' | 'already_disputed' | 'closed';

/** A refused dispute operation; `reason` says why, `shortMessage` is safe to show to the caller. */
export class DisputeError extends Error {
  override name = 'DisputeError';
  constructor(
    readonly reason: DisputeErrorReason,
    readonly shortMessage: string,
    /** the existing dispute, for `already_disputed` */
    readonly disputeId?: string,
  ) {
    super(shortMessage);
  }
}
