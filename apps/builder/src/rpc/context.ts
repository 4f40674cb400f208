import type { Logger } from 'pino';
import type { Address } from 'viem';

/** What every JSON-RPC method receives besides its params (jayson context). */
export interface RpcContext {
  /** Searcher identity: the address recovered from X-Bundle-Signature. */
  searcher: Address;
  /** Client IP (the rate-limit key). */
  ip: string;
  log: Logger;
}
