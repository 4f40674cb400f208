import type { BrowserContext, Page } from 'playwright-core';
import { isHex, numberToHex, type Hex, type LocalAccount } from 'viem';

/** One EIP-1193 request the page made of the injected wallet. */
export interface WalletRequest {
  method: string;
  params: unknown[];
}

/** Options of {@link injectWallet}. */
export interface InjectWalletOptions {
  /** EIP-155 chain id reported by `eth_chainId` (default 8453, the payment chain). */
  chainId?: number;
  /** Methods the "user" refuses: answered with EIP-1193 error 4001 (User Rejected Request). */
  reject?: ReadonlySet<string>;
}

/** The wallet injected into a page or context: the requests it answered, for assertions. */
export interface InjectedWallet {
  account: LocalAccount;
  requests: WalletRequest[];
  /** Requests of one method. */
  calls(method: string): WalletRequest[];
}

/** Name of the Node function the page's `window.ethereum` calls (exposed with `exposeFunction`). */
const BRIDGE = '__acgTestWallet';

/**
 * What a page sees as `window.ethereum`: an EIP-1193 provider (`request({method, params})`,
 * `on`/`removeListener`) whose every request goes to the Node side through the exposed function.
 * A refusal comes back as `{error: {code, message}}` and is thrown as a ProviderRpcError-shaped
 * `Error` with `code`, as a browser wallet throws it. Runs in the page (an init script).
 */
function installProvider(bridge: string) {
  // runs in the page: its globals, typed here without the DOM library
  const page = globalThis as unknown as Record<string, unknown>;
  const call = page[bridge] as (m: string, p: unknown[]) => Promise<{ result?: unknown; error?: { code: number; message: string } }>;
  const listeners = new Map<string, Set<(...args: unknown[]) => void>>();
  const provider = {
    isAcgTestWallet: true,
    async request(args: { method: string; params?: unknown[] }) {
      if (!args || typeof args.method !== 'string') throw Object.assign(new Error('Invalid request'), { code: -32600 });
      const answer = await call(args.method, Array.isArray(args.params) ? args.params : []);
      if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
      return answer.result;
    },
    on(event: string, fn: (...args: unknown[]) => void) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event)!.add(fn);
      return provider;
    },
    removeListener(event: string, fn: (...args: unknown[]) => void) {
      listeners.get(event)?.delete(fn);
      return provider;
    },
  };
  Object.defineProperty(page, 'ethereum', { value: provider, configurable: true });
}

/**
 * Injects an EIP-1193 wallet backed by `account` (a viem local account, e.g. a dev private key)
 * into every page of `target`, as a browser extension wallet would: `window.ethereum.request`
 * answers `eth_requestAccounts` and `eth_accounts` with the account's address, `eth_chainId`
 * with the chain id in hex, and `personal_sign` ([message as 0x-hex of its UTF-8 bytes or plain
 * text, address]) with the account's EIP-191 signature (viem `signMessage`). The key never enters
 * the page: signing runs in Node behind `exposeFunction`. Other methods answer 4200 (unsupported).
 * Call before the page navigates.
 */
export async function injectWallet(target: Page | BrowserContext, account: LocalAccount, opts: InjectWalletOptions = {}): Promise<InjectedWallet> {
  const chainId = opts.chainId ?? 8453;
  const requests: WalletRequest[] = [];
  const refuse = (code: number, message: string) => ({ error: { code, message } });
  await target.exposeFunction(BRIDGE, async (method: string, params: unknown[]) => {
    requests.push({ method, params });
    if (opts.reject?.has(method)) return refuse(4001, 'User rejected the request.');
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return { result: [account.address] };
      case 'eth_chainId':
        return { result: numberToHex(chainId) };
      case 'personal_sign': {
        const [data, address] = params as [string, string];
        if (typeof address !== 'string' || address.toLowerCase() !== account.address.toLowerCase()) {
          return refuse(4100, 'The requested account has not been authorized by the user.');
        }
        if (typeof data !== 'string') return refuse(-32602, 'personal_sign needs [message, address].');
        const message = isHex(data) ? { raw: data as Hex } : data;
        return { result: await account.signMessage({ message }) };
      }
      default:
        return refuse(4200, `The test wallet does not support ${method}.`);
    }
  });
  await target.addInitScript(installProvider, BRIDGE);
  return { account, requests, calls: (method) => requests.filter((r) => r.method === method) };
}
