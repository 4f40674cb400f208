/**
 * The wire shapes the SDK shares with the gateway, taken from the zod schemas of `@acg/schemas`
 * (`z.output` for answers, `z.input` for request bodies). This file is type-only and is not
 * bundled: `scripts/wire-types.ts` expands every alias below into plain TypeScript in
 * `src/wire/types.generated.ts`, so the published `.d.ts` needs neither `@acg/schemas` nor zod.
 * Regenerate with `npx tsx packages/sdk/scripts/wire-types.ts` (a unit test fails when it is stale).
 */
import type * as S from '@acg/schemas';
import type { z } from 'zod';

export type WireCapability = z.output<typeof S.LegacyRegistryEntry>;
export type WireRegistry = z.output<typeof S.LegacyRegistry>;
export type WireX402Terms = z.output<typeof S.LegacyX402Terms>;
export type WireCapabilityStatus = z.output<typeof S.CapabilityStatus>;
export type WireAuth = z.output<typeof S.Auth>;
export type WireHealthStatus = z.output<typeof S.HealthStatus>;
export type WireExecutionPayment = z.output<typeof S.ExecutionPayment>;
export type WireExecutionSucceeded = z.output<typeof S.ExecutionSucceeded>;
export type WireExecutionError = z.output<typeof S.ExecutionError>;
export type WireRefund = z.output<typeof S.Refund>;
export type WireRefundRecord = z.output<typeof S.RefundRecord>;
export type WireExecutionRecord = z.output<typeof S.ExecutionRecord>;
export type WireProblemIssue = z.output<typeof S.ProblemIssue>;
export type WireProblemDetails = z.output<typeof S.ProblemDetails>;
export type WirePaymentChallenge = z.output<typeof S.PaymentChallenge>;
export type WireJobRequest = z.input<typeof S.JobRequest>;
export type WireJobCreated = z.output<typeof S.JobCreated>;
export type WireJobRecord = z.output<typeof S.JobRecord>;
export type WireJobStep = z.output<typeof S.JobStep>;
export type WireLendingProtocol = z.output<typeof S.LendingProtocol>;
export type WireLiquidationOpportunity = z.output<typeof S.LiquidationOpportunity>;
/** Query parameters are coerced from strings by the gateway: the SDK takes the parsed types, each optional. */
export type WireLiquidationSearchQuery = Partial<z.output<typeof S.LiquidationSearchQuery>>;
export type WireLiquidationSearchResponse = z.output<typeof S.LiquidationSearchResponse>;
export type WireLiquidationPlanOpportunity = z.input<typeof S.LiquidationPlanOpportunity>;
export type WireLiquidationPlanRequest = z.input<typeof S.LiquidationPlanRequest>;
export type WireLiquidationPlan = z.output<typeof S.LiquidationPlan>;
export type WirePlannedTransaction = z.output<typeof S.PlannedTransaction>;
export type WirePlanTokenFlow = z.output<typeof S.PlanTokenFlow>;
export type WireLiquidationPlanRefusalReason = z.output<typeof S.LiquidationPlanRefusalReason>;
export type WireChainName = z.output<typeof S.ChainName>;
export type WireWalletEventName = z.output<typeof S.WalletEventName>;
export type WireSubscriptionRequest = z.input<typeof S.WalletMonitorSubscriptionRequest>;
export type WireSubscriptionCreated = z.output<typeof S.WalletMonitorSubscriptionCreated>;
export type WireSubscriptionCancelled = z.output<typeof S.WalletMonitorSubscriptionCancelled>;
export type WireSubscription = z.output<typeof S.WalletMonitorSubscription>;
export type WireWalletEvent = z.output<typeof S.WalletEvent>;
export type WireDeadLetter = z.output<typeof S.WalletMonitorDeadLetter>;
export type WireDeliveryAttempt = z.output<typeof S.WalletMonitorDeliveryAttempt>;
export type WireTestEventQueued = z.output<typeof S.WalletMonitorTestEventQueued>;
export type WireAccountView = z.output<typeof S.AccountView>;
export type WireDepositResponse = z.output<typeof S.DepositResponse>;
export type WireProviderOffer = z.input<typeof S.ProviderOffer>;
export type WireProviderChallenge = z.output<typeof S.ProviderChallenge>;
export type WireProviderRegistered = z.output<typeof S.ProviderRegistered>;
