import { gzipSync } from 'node:zlib';
import type { BuilderMetrics } from '@acg/observability';
import type { Logger } from 'pino';
import type { BuilderStats } from '@acg/bundles';
import type { RelayTarget } from '../config.js';
import type { SubmitBlockRequest } from './types.js';
import { encodeSubmitBlockRequestSsz } from './wire.js';

/** How a submission body is encoded: SSZ gzipped, SSZ, or JSON (the order tried). */
export type SubmissionEncoding = 'ssz+gzip' | 'ssz' | 'json';
/** Encodings in order of preference; a relay answering 415 gets the next one. */
export const SUBMISSION_ENCODINGS: readonly SubmissionEncoding[] = ['ssz+gzip', 'ssz', 'json'];

/** Result of one submission to one relay. */
export interface RelaySubmission {
  relay: string;
  url: string;
  /** true when the relay answered 2xx. */
  accepted: boolean;
  /** HTTP status, or 0 when the relay did not answer (network error or timeout). */
  status: number;
  /** The encoding of the body the relay answered (after any 415 fallbacks). */
  encoding: SubmissionEncoding;
  /** From sending the (last) request to its answer, ms. */
  latency_ms: number;
  /** Short reason when refused (the relay's `message`, cut to 200 characters), never a stack trace. */
  reason?: string;
}

/** Path of the MEV-Boost relay builder API that receives block submissions. */
export const SUBMIT_BLOCK_PATH = '/relay/v1/builder/blocks';

interface Bodies {
  request: SubmitBlockRequest;
  ssz?: Uint8Array;
  gzip?: Uint8Array;
  json?: string;
}

function body(b: Bodies, encoding: SubmissionEncoding): { bytes: Uint8Array | string; headers: Record<string, string> } {
  if (encoding === 'json') {
    b.json ??= JSON.stringify(b.request);
    return { bytes: b.json, headers: { 'content-type': 'application/json' } };
  }
  b.ssz ??= encodeSubmitBlockRequestSsz(b.request);
  if (encoding === 'ssz') return { bytes: b.ssz, headers: { 'content-type': 'application/octet-stream' } };
  b.gzip ??= gzipSync(b.ssz, { level: 1 });
  return { bytes: b.gzip, headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' } };
}

/**
 * Sends block-construction attempts to relays (always-submit policy, docs/decisions.md "Bundle submission"),
 * in parallel: the Electra `SubmitBlockRequest` as SSZ (`application/octet-stream`), gzipped
 * (`Content-Encoding: gzip`) where the relay takes it. A relay answering 415 Unsupported Media
 * Type gets the same submission at once in the next encoding (SSZ without gzip, then JSON), and
 * that encoding from then on in this process. Each submission is counted in the live health
 * counters with its outcome, rejection reason and latency.
 */
export class RelaySubmitter {
  private readonly encoding = new Map<string, number>();

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

  /** The encoding this process currently sends to `relay`. */
  encodingFor(relay: string): SubmissionEncoding {
    return SUBMISSION_ENCODINGS[this.encoding.get(relay) ?? 0];
  }

  /** POSTs `request` to `{relay}/relay/v1/builder/blocks` of each of `relays` (default: all configured); never throws. */
  async submitAll(request: SubmitBlockRequest, relays: readonly RelayTarget[] = this.opts.relays): Promise<RelaySubmission[]> {
    const bodies: Bodies = { request };
    return Promise.all(relays.map((relay) => this.submitOne(relay, bodies)));
  }

  private async submitOne(relay: RelayTarget, bodies: Bodies): Promise<RelaySubmission> {
    const at = new Date();
    let result: RelaySubmission;
    for (;;) {
      const index = this.encoding.get(relay.name) ?? 0;
      const encoding = SUBMISSION_ENCODINGS[index];
      const started = performance.now();
      try {
        const { bytes, headers } = body(bodies, encoding);
        const res = await fetch(`${relay.url}${SUBMIT_BLOCK_PATH}`, {
          method: 'POST',
          headers: { ...headers, accept: 'application/json' },
          body: bytes,
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 2_000),
        });
        const text = await res.text().catch(() => '');
        const latency_ms = performance.now() - started;
        if (res.status === 415 && index < SUBMISSION_ENCODINGS.length - 1) {
          this.encoding.set(relay.name, index + 1);
          this.opts.log.info({ relay: relay.name, refused: encoding, next: SUBMISSION_ENCODINGS[index + 1] }, 'relay refused the encoding (415): falling back');
          continue;
        }
        let reason: string | undefined;
        if (!res.ok) {
          try {
            reason = String((JSON.parse(text) as { message?: unknown }).message ?? '').slice(0, 200) || undefined;
          } catch {
            reason = undefined;
          }
          reason ??= `HTTP ${res.status}`;
        }
        result = { relay: relay.name, url: relay.url, accepted: res.ok, status: res.status, encoding, latency_ms, reason };
      } catch (e) {
        const reason = (e as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable';
        result = { relay: relay.name, url: relay.url, accepted: false, status: 0, encoding, latency_ms: performance.now() - started, reason };
      }
      break;
    }
    this.opts.metrics?.relaySubmission(relay.name, result.accepted ? 'accepted' : result.status === 0 ? 'unreachable' : 'refused');
    await this.opts.stats
      .recordSubmission(relay.name, result.accepted, at, { latencyMs: result.latency_ms, reason: result.reason })
      .catch((e) => this.opts.log.warn({ err: (e as Error).message }, 'could not record a relay submission'));
    this.opts.log.debug(
      { relay: relay.name, slot: bodies.request.message.slot, accepted: result.accepted, status: result.status, encoding: result.encoding },
      'relay submission',
    );
    return result;
  }
}
