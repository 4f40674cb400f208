/** The SDK's actions (viem style): each takes a {@link GatewayContext} and one parameters object. */
export { cancelJob, type CancelJobErrorType, type CancelJobParameters, type CancelJobReturnType } from './cancelJob.js';
export { createJob, type CreateJobErrorType, type CreateJobParameters, type CreateJobReturnType } from './createJob.js';
export { execute, type ExecuteErrorType, type ExecuteParameters, type ExecuteReturnType } from './execute.js';
export { getExecution, type GetExecutionErrorType, type GetExecutionParameters, type GetExecutionReturnType } from './getExecution.js';
export { getJob, type GetJobErrorType, type GetJobParameters, type GetJobReturnType } from './getJob.js';
export {
  LIQUIDATION_PLAN_ID,
  planLiquidation,
  planOpportunityOf,
  type PlanLiquidationErrorType,
  type PlanLiquidationParameters,
} from './planLiquidation.js';
export {
  LIQUIDATION_SEARCH_ID,
  searchLiquidations,
  type SearchLiquidationsErrorType,
  type SearchLiquidationsParameters,
  type SearchLiquidationsReturnType,
} from './searchLiquidations.js';
export { signIn, type SignInErrorType, type SignInParameters, type SignInReturnType } from './signIn.js';
export { signOut, type SignOutErrorType, type SignOutParameters, type SignOutReturnType } from './signOut.js';
export { waitForJob, type WaitForJobErrorType, type WaitForJobParameters, type WaitForJobReturnType } from './waitForJob.js';
export {
  cancelSubscription,
  type CancelSubscriptionErrorType,
  type CancelSubscriptionParameters,
  type CancelSubscriptionReturnType,
} from './walletMonitor/cancelSubscription.js';
export { getDeadLetters, type GetDeadLettersErrorType, type GetDeadLettersParameters, type GetDeadLettersReturnType } from './walletMonitor/getDeadLetters.js';
export { getDeliveries, type GetDeliveriesErrorType, type GetDeliveriesParameters, type GetDeliveriesReturnType } from './walletMonitor/getDeliveries.js';
export {
  getSubscription,
  type GetSubscriptionErrorType,
  type GetSubscriptionParameters,
  type GetSubscriptionReturnType,
} from './walletMonitor/getSubscription.js';
export {
  replayDeadLetters,
  type ReplayDeadLettersErrorType,
  type ReplayDeadLettersParameters,
  type ReplayDeadLettersReturnType,
} from './walletMonitor/replayDeadLetters.js';
export {
  sendTestEvent,
  type SendTestEventErrorType,
  type SendTestEventParameters,
  type SendTestEventReturnType,
} from './walletMonitor/sendTestEvent.js';
export { subscribe, type SubscribeErrorType, type SubscribeParameters, type SubscribeReturnType } from './walletMonitor/subscribe.js';
export { DEPOSIT_LABEL, deposit, type DepositErrorType, type DepositParameters, type DepositReturnType } from './deposit.js';
export { getAccount, type GetAccountErrorType, type GetAccountParameters, type GetAccountReturnType } from './getAccount.js';
export {
  onboardProvider,
  type OnboardProviderErrorType,
  type OnboardProviderParameters,
  type OnboardProviderReturnType,
} from './onboardProvider.js';
export {
  MCP_PAYMENT_META,
  MCP_PAYMENT_RESPONSE_META,
  callPaidTool,
  mcpToolName,
  readMcpPaymentRequired,
  type CallPaidToolErrorType,
  type CallPaidToolParameters,
  type CallPaidToolReturnType,
  type McpToolClient,
  type McpToolResult,
} from './callPaidTool.js';
export { quote, type QuoteErrorType, type QuoteParameters, type QuoteReturnType } from './quote.js';
export {
  getChannel,
  refundChannel,
  topUpChannel,
  type ChannelErrorType,
  type ChannelInfo,
  type ChannelRequestParameters,
  type RefundChannelReturnType,
} from './channels.js';
