import { onboard, problemCode, ProviderOnboardingError, type OnboardParameters, type OnboardReturnType, type ProviderLog } from '@acg/provider-kit';

/** Options of {@link onboardWithRetry}. */
export interface OnboardWithRetryOptions {
  /** First wait after a retryable failure, ms (default 1000); doubles up to `maxDelayMs`. */
  initialDelayMs?: number;
  /** Longest wait between attempts, ms (default 30000). */
  maxDelayMs?: number;
  /** Stops retrying (the promise then resolves undefined). */
  signal?: AbortSignal;
  log: ProviderLog;
  /** Called with each failed attempt's log fields (`event` `onboarding_retry` or `onboarding_failed`), e.g. to tell a parent process. */
  report?: (event: OnboardingAttemptEvent) => void;
}

/** One failed onboarding attempt, as logged. */
export interface OnboardingAttemptEvent {
  event: 'onboarding_retry' | 'onboarding_failed';
  step?: string;
  status?: number;
  code?: unknown;
  detail: string;
  attempt: number;
  retry_in_ms?: number;
}

/**
 * Onboards (see `onboard` of `@acg/provider-kit`) and keeps trying while the failure is retryable (the
 * gateway is not up yet, its provider routes answer 404, 5xx ...), waiting 1 s, 2 s, 4 s ... up to
 * 30 s between attempts and logging each failure (`event: "onboarding_retry"`). A failure that needs
 * a change first (400 invalid offer, 401, 409 id clash) is logged (`event: "onboarding_failed"`)
 * and ends the attempts.
 *
 * @returns the registration, or undefined when it gave up (non-retryable) or `signal` aborted.
 */
export async function onboardWithRetry(params: OnboardParameters, opts: OnboardWithRetryOptions): Promise<OnboardReturnType | undefined> {
  let delay = opts.initialDelayMs ?? 1000;
  const maxDelay = opts.maxDelayMs ?? 30_000;
  for (let attempt = 1; !opts.signal?.aborted; attempt++) {
    try {
      return await onboard(params);
    } catch (e) {
      if (opts.signal?.aborted) return undefined;
      const err = e instanceof ProviderOnboardingError ? e : undefined;
      const facts = {
        step: err?.step,
        status: err?.status,
        code: problemCode(err?.problem),
        detail: err?.shortMessage ?? String((e as Error)?.message ?? e),
        attempt,
      };
      if (!err?.retryable) {
        const failed = { event: 'onboarding_failed' as const, ...facts };
        opts.log.error(failed, 'onboarding refused by the gateway; not retrying (fix the cause and restart)');
        opts.report?.(failed);
        return undefined;
      }
      const hint = err.status === 404 ? ' (the gateway has no provider routes yet?)' : '';
      const retry = { event: 'onboarding_retry' as const, ...facts, retry_in_ms: delay };
      opts.log.warn(retry, `onboarding failed${hint}; retrying`);
      opts.report?.(retry);
      await sleep(delay, opts.signal);
      delay = Math.min(delay * 2, maxDelay);
    }
  }
  return undefined;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
