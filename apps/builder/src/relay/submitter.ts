import type { BuilderMetrics } from '@acg/observability';
import type { Logger } from 'pino';
import type { RelayTarget } from '../config.js';
import type { BuilderStats } from '@acg/bundles';
import type { SubmitBlockRequest } from './types.js';

/** Result of one submission to one relay. */
export interface RelaySubmission {
  relay: string;
  url: string;
  /** true when the relay answered 2xx. */
  accepted: boolean;
  /** HTTP status, or 0 when the relay did not answer (network error or timeout). */
  status: number;
  /** Short reason when refused (the relay's `message`, cut to 200 characters), never a stack trace. */
  reason?: string;
}

/** Path of the MEV-Boost relay builder API that receives block submissions. */
export const SUBMIT_BLOCK_PATH = '/relay/v1/builder/blocks';

/**
 * Sends every block-construction attempt to every relay (always-submit policy, DESIGN "Bundle
 * submission"), in parallel, and counts each submission in the live health counters.
 */
export class RelaySubmitter {
  constructor(
    private readonly opts: {
      relays: readonly RelayTarget[];
      stats: BuilderStats;
      log: Logger;
      timeoutMs?: number;
      /** Counts each submission per relay and outcome (`acg_builder_relay_submissions_total`). */
      metrics?: Pick<BuilderMetrics, 'relaySubmission'>;
    },
  ) {}

  get relays(): readonly RelayTarget[] {
    return this.opts.relays;
  }

  /** POSTs `request` to `{relay}/relay/v1/builder/blocks` of every relay; never throws. */
  async submitAll(request: SubmitBlockRequest): Promise<RelaySubmission[]> {
    const body = JSON.stringify(request);
    return Promise.all(this.opts.relays.map((relay) => this.submitOne(relay, body, request.message.slot)));
  }

  private async submitOne(relay: RelayTarget, body: string, slot: string): Promise<RelaySubmission> {
    const at = new Date();
    let result: RelaySubmission;
    try {
      const res = await fetch(`${relay.url}${SUBMIT_BLOCK_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body,
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 2_000),
      });
      const text = await res.text().catch(() => '');
      let reason: string | undefined;
      if (!res.ok) {
        try {
          reason = String((JSON.parse(text) as { message?: unknown }).message ?? '').slice(0, 200) || undefined;
        } catch {
          reason = undefined;
        }
      }
      result = { relay: relay.name, url: relay.url, accepted: res.ok, status: res.status, reason };
    } catch (e) {
      result = { relay: relay.name, url: relay.url, accepted: false, status: 0, reason: (e as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable' };
    }
    this.opts.metrics?.relaySubmission(relay.name, result.accepted ? 'accepted' : result.status === 0 ? 'unreachable' : 'refused');
    await this.opts.stats
      .recordSubmission(relay.name, result.accepted, at)
      .catch((e) => this.opts.log.warn({ err: (e as Error).message }, 'could not record a relay submission'));
    this.opts.log.debug({ relay: relay.name, slot, accepted: result.accepted, status: result.status }, 'relay submission');
    return result;
  }
}
