import { createHash } from 'node:crypto';
import type { RedisKeys } from '@acg/redis';
import { PROBE_NO_ANSWER_STATUS, ProbeRecord, probeStatus } from '@acg/schemas';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Telemetry } from '@acg/execution';
import { SELF_CHECK_HEADER, selfCheckToken } from '@acg/observability';

/** One probe: which capability it proves, what HTTP request it makes, what answer counts as up. */
export interface ProbeSpec {
  capabilityId: string;
  method: 'GET' | 'POST';
  /** Path on the gateway, e.g. `/registry`. */
  path: string;
  /** Absolute URL instead of a gateway path (e.g. the builder's `/rpc`). */
  url?: () => string;
  body?: unknown;
  /** Extra request headers (e.g. MCP's `Accept: application/json, text/event-stream`). */
  headers?: Record<string, string>;
  /** HTTP status that means the surface works (200; 402 for a paid endpoint's challenge). */
  expectStatus: number;
  /** Extra check of the parsed body (e.g. the 402 carries docs/spec-notes.md 2.9 fields). */
  check?(body: unknown): boolean;
  /**
   * Requests sent in order after the first one passed, to the same URL with the same method and
   * headers, each expecting `expectStatus` and its own check (e.g. MCP `tools/list` after
   * `initialize`); the record shows the last answer.
   */
  followUp?: { body: unknown; check(body: unknown): boolean }[];
  /** A direct check of the capability itself, run after the HTTP one (e.g. read a balance). */
  direct?(): Promise<boolean>;
  /**
   * A condition that must hold too, checked after the HTTP request passed, without measuring the
   * capability (the latency recorded is the HTTP request's, as without it): e.g. the builder's node
   * can seal blocks. False fails the probe.
   */
  gate?(): Promise<boolean>;
  /**
   * A probe that makes its own request (a provider offer: a signed call to the provider's
   * endpoint); replaces the HTTP request above. Undefined: nothing to write for the capability
   * (another offer of it stands; docs/marketplace.md).
   */
  custom?(): Promise<ProbeRecord | undefined>;
  /** The provider whose capability this is (for {@link Prober.probeProvider}). */
  providerId?: string;
}

const EMPTY_SHA256 = createHash('sha256').digest('hex');

/**
 * Probe records in Redis: one hash, capability id → JSON {@link ProbeRecord}. Shared by replicas.
 * Reading validates each record: a stored probe status outside 100..599 (e.g. 0, written by an
 * older release for "no answer") reads as 599 (`PROBE_NO_ANSWER_STATUS`), and a record that is not
 * a probe record at all reads as never probed, so no stored record can make `/registry` or
 * `/status/health` fail (issue 33).
 */
export class ProbeStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}
  async all(): Promise<Record<string, ProbeRecord>> {
    const h = await this.redis.hgetall(this.keys.probes());
    const out: Record<string, ProbeRecord> = {};
    for (const [id, json] of Object.entries(h)) {
      const record = readProbeRecord(json);
      if (record) out[id] = record;
    }
    return out;
  }
  async save(id: string, record: ProbeRecord): Promise<void> {
    await this.redis.hset(this.keys.probes(), id, JSON.stringify(record));
  }
}

/** A stored probe record, its status made valid ({@link probeStatus}); undefined when it is not a probe record. */
function readProbeRecord(json: string): ProbeRecord | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return undefined;
  }
  const probe = (raw as { probe?: { status?: unknown } } | null)?.probe;
  const fixed = probe && typeof probe === 'object' ? { ...(raw as object), probe: { ...probe, status: probeStatus(Number(probe.status)) } } : raw;
  const parsed = ProbeRecord.safeParse(fixed);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The prober (docs/decisions.md "Registry, catalog and health"): a capability is LIVE only while its latest
 * probe passed; a failed probe demotes it. Each probe makes a real HTTP request to this gateway's
 * public surface and records url, method, status and body_sha256; paid endpoints are probed by
 * their x402 challenge (402 with docs/spec-notes.md 2.9 fields) plus a direct run of the capability, so no
 * payment is spent. A Redis lock keeps replicas from probing at the same time.
 */
export class Prober {
  private timer?: NodeJS.Timeout;
  constructor(
    private readonly opts: {
      redis: Redis;
      keys: RedisKeys;
      store: ProbeStore;
      telemetry: Telemetry;
      baseUrl: () => string;
      /** What to probe, read at each round (provider capabilities come and go). */
      specs: () => ProbeSpec[];
      log: Logger;
      onProbed?: () => void;
    },
  ) {}

  /** Probes every spec once now; returns the records written. */
  async runOnce(): Promise<Record<string, ProbeRecord>> {
    return this.runSpecs(this.opts.specs());
  }

  /** Probes the capabilities of one provider now (right after it registers or changes), so they need not wait a round to go LIVE. */
  probeProvider(providerId: string): Promise<Record<string, ProbeRecord>> {
    return this.runSpecs(this.opts.specs().filter((s) => s.providerId === providerId));
  }

  private async runSpecs(specs: ProbeSpec[]): Promise<Record<string, ProbeRecord>> {
    const out: Record<string, ProbeRecord> = {};
    for (const spec of specs) {
      const record = await this.probe(spec);
      if (!record) continue;
      await this.opts.store.save(spec.capabilityId, record);
      out[spec.capabilityId] = record;
    }
    this.opts.onProbed?.();
    return out;
  }

  /** Probes now, then every `intervalSeconds` (0: only once). */
  start(intervalSeconds: number): Promise<Record<string, ProbeRecord>> {
    const first = this.runOnce();
    if (intervalSeconds > 0) {
      this.timer = setInterval(async () => {
        const lock = await this.opts.redis.set(`${this.opts.keys.prefix}probe-lock`, '1', 'PX', intervalSeconds * 900, 'NX');
        if (lock) await this.runOnce().catch((e) => this.opts.log.error({ err: String(e).slice(0, 200) }, 'probe round failed'));
      }, intervalSeconds * 1000);
      this.timer.unref();
    }
    return first;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async probe(spec: ProbeSpec): Promise<ProbeRecord | undefined> {
    const url = spec.url ? spec.url() : `${this.opts.baseUrl()}${spec.path}`;
    if (spec.custom) {
      const started = performance.now();
      const record = await spec.custom().catch((e): ProbeRecord => {
        this.opts.log.warn({ capability_id: spec.capabilityId, err: String((e as Error).message).slice(0, 200) }, 'probe failed');
        return {
          ok: false,
          checked_at: new Date().toISOString(),
          probe: { url, method: spec.method, status: PROBE_NO_ANSWER_STATUS, body_sha256: EMPTY_SHA256 },
        };
      });
      if (record) await this.opts.telemetry.record(spec.capabilityId, performance.now() - started, record.ok).catch(() => undefined);
      return record;
    }
    const started = performance.now();
    let status = PROBE_NO_ANSWER_STATUS;
    let bytes = Buffer.alloc(0);
    let ok = false;
    const send = async (body: unknown, check: ((body: unknown) => boolean) | undefined): Promise<boolean> => {
      const res = await fetch(url, {
        method: spec.method,
        // marked as this process's self-check: the request log writes it at debug, not info
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...spec.headers, [SELF_CHECK_HEADER]: selfCheckToken() },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      status = res.status;
      bytes = Buffer.from(await res.arrayBuffer());
      return status === spec.expectStatus && (!check || check(JSON.parse(bytes.toString('utf8'))));
    };
    try {
      ok = await send(spec.body, spec.check);
      for (const step of spec.followUp ?? []) {
        if (!ok) break;
        ok = await send(step.body, step.check);
      }
      if (ok && spec.gate) ok = await spec.gate();
      if (ok && spec.direct) ok = await spec.direct();
    } catch (e) {
      this.opts.log.warn({ capability_id: spec.capabilityId, err: String((e as Error).message).slice(0, 200) }, 'probe failed');
      ok = false;
    }
    const ms = performance.now() - started;
    if (!spec.direct) await this.opts.telemetry.record(spec.capabilityId, ms, ok);
    return {
      ok,
      checked_at: new Date().toISOString(),
      probe: { url, method: spec.method, status, body_sha256: createHash('sha256').update(bytes).digest('hex') },
      // the capability itself ran (and its output validated): more than the payment challenge was seen
      ...(ok && spec.direct ? { ran: true } : {}),
    };
  }
}
