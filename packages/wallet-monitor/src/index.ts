/**
 * @acg/wallet-monitor: wallet events (ETH and ERC-20 transfers in and out of watched addresses on
 * Ethereum, Base and Arbitrum) delivered by signed webhooks (docs/decisions.md "Wallet monitor").
 */
export { AddressIndex, AddressMatcher } from './addressIndex.js';
export {
  CHAIN_NAMES,
  DEFAULT_CONFIRMATIONS,
  DEFAULT_RETRY_SCHEDULE_MS,
  DELIVERY_QUEUE,
  EVENT_PRICE_BASE_UNITS,
  RENEWAL_MIN_BALANCE_BASE_UNITS,
  SUBSCRIPTION_TERM_SECONDS,
  WALLET_MONITOR_CAPABILITY_ID,
  type ChainName,
} from './config.js';
export {
  ATTEMPT_LOG_LENGTH,
  DELIVERY_LATENCY_SERIES,
  deliveryJobId,
  DeliveryQueue,
  EVENT_FATE_TTL_SECONDS,
  signWebhook,
  startDeliveryWorker,
  type DeadLetter,
  type DeliveryJobData,
  type DeliveryObserver,
  type DeliveryWorker,
  type DeliveryWorkerOptions,
  type WalletEventPayload,
} from './delivery.js';
export {
  erc20TransfersFromLogs,
  nativeTransfersFromParityTraces,
  nativeTransfersFromTraces,
  nativeTransfersFromTransactions,
  TRANSFER_TOPIC,
  type CallFrame,
  type ParityTrace,
  type RawTransfer,
  type TxTrace,
} from './detect.js';
export { deliveryErrorMessage, INSUFFICIENT_BALANCE, lastErrorOf } from './deliveryErrors.js';
export { DeliveryAttemptError, SubscriptionForbiddenError, SubscriptionNotActiveError, SubscriptionNotFoundError, WebhookUrlError } from './errors.js';
export { testDelivery } from './testEvent.js';
export { httpFailureReason, WebhookPoster, type PostResult } from './http.js';
export { newSubscriptionId, newWebhookSecret, positionKey, reissuedWebhookId, removedWebhookId, webhookId, type TransferPosition } from './ids.js';
export {
  resolveWsUrl,
  startWalletMonitor,
  walletMonitorConfigFromEnv,
  WS_URL_VARS,
  type RunningWalletMonitor,
  type WalletMonitorConfig,
  type WatchedChainConfig,
} from './monitor.js';
export { WalletMonitorService, type WalletMonitorHealth, type WalletMonitorServiceOptions } from './service.js';
export {
  SubscriptionStore,
  type DeliveryStats,
  type SubscriptionRecord,
  type SubscriptionRequest,
  type SubscriptionStatus,
  type SubscriptionStoreOptions,
  type SubscriptionView,
  type WalletEventName,
} from './subscriptions.js';
export { NATIVE_ASSET, TokenMetadata, type AssetInfo } from './tokens.js';
export { ChainWatcher, type ChainWatcherOptions, type HeadSource, type NativeSource, type WatcherCursor, type WatcherState } from './watcher.js';
