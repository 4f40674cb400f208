import { getAddress, type Address, type Hex } from 'viem';
import type { Logger } from 'pino';
import type { RelayTarget } from '../config.js';
import type { ValidatorRegistrationEntry } from './types.js';

/** Path of the relay builder API listing the proposers of the current and next epoch with their registrations. */
export const VALIDATORS_PATH = '/relay/v1/builder/validators';

/** The registered proposer of one slot as one relay lists it. */
export interface ProposerDuty {
  slot: bigint;
  validatorIndex: bigint;
  /** BLS public key, 48 bytes hex (lowercase). */
  pubkey: Hex;
  /** Where the proposer wants the block's value paid (checksummed). */
  feeRecipient: Address;
  /** The proposer's preferred block gas limit. */
  gasLimit: bigint;
}

/** The proposer of a slot and the relays that list it with the same pubkey and fee recipient (the ones to submit to). */
export interface SlotProposer extends ProposerDuty {
  relays: RelayTarget[];
}

/** Options of {@link ValidatorRegistrations}. */
export interface ValidatorRegistrationsOptions {
  relays: readonly RelayTarget[];
  log: Logger;
  /** Per-request timeout, ms (default 2000). */
  timeoutMs?: number;
  /** A relay's list older than this is fetched again before use, ms (default 12000: one slot). */
  maxAgeMs?: number;
  /** A relay that does not list the slot asked for is asked again once its list is this old, ms (default 1000). */
  missRefetchMs?: number;
}

interface RelayList {
  fetchedAt: number;
  bySlot: Map<bigint, ProposerDuty>;
}

const HEX48 = /^0x[0-9a-fA-F]{96}$/;
const HEX20 = /^0x[0-9a-fA-F]{40}$/;
const DECIMAL = /^[0-9]{1,20}$/;

/** Reads one entry of the relay's list; undefined when malformed (such entries are skipped). */
export function parseRegistrationEntry(e: unknown): ProposerDuty | undefined {
  const entry = e as Partial<ValidatorRegistrationEntry> | null;
  const m = entry?.entry?.message;
  if (!entry || !m || typeof entry.slot !== 'string' || !DECIMAL.test(entry.slot)) return undefined;
  if (typeof m.pubkey !== 'string' || !HEX48.test(m.pubkey) || typeof m.fee_recipient !== 'string' || !HEX20.test(m.fee_recipient)) return undefined;
  if (typeof m.gas_limit !== 'string' || !DECIMAL.test(m.gas_limit)) return undefined;
  const index = typeof entry.validator_index === 'string' && DECIMAL.test(entry.validator_index) ? BigInt(entry.validator_index) : 0n;
  return {
    slot: BigInt(entry.slot),
    validatorIndex: index,
    pubkey: m.pubkey.toLowerCase() as Hex,
    feeRecipient: getAddress(m.fee_recipient),
    gasLimit: BigInt(m.gas_limit),
  };
}

/**
 * The proposers' registrations as each relay lists them (`GET /relay/v1/builder/validators`,
 * relay builder API): for each upcoming slot, the proposer's pubkey, fee recipient and gas limit.
 * A block for a slot goes only to the relays that list its proposer (docs/decisions.md "Bundle submission").
 * Lists are kept per process (each replica asks the relays itself); `start()` refreshes them in
 * the background, and {@link proposerFor} refreshes a stale or missing list before answering.
 */
export class ValidatorRegistrations {
  private readonly lists = new Map<string, RelayList>();
  private readonly inflight = new Map<string, Promise<void>>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly opts: ValidatorRegistrationsOptions) {}

  /** Refreshes every relay's list now, then every `intervalMs` (0: never again). */
  start(intervalMs: number): void {
    void this.refreshAll();
    if (intervalMs > 0) {
      this.timer = setInterval(() => void this.refreshAll(), intervalMs);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Fetches every relay's list (in parallel); a relay that fails keeps its previous list. Never throws. */
  async refreshAll(): Promise<void> {
    await Promise.all(this.opts.relays.map((r) => this.refresh(r)));
  }

  private refresh(relay: RelayTarget): Promise<void> {
    const running = this.inflight.get(relay.name);
    if (running) return running;
    const p = this.fetchList(relay).finally(() => this.inflight.delete(relay.name));
    this.inflight.set(relay.name, p);
    return p;
  }

  private async fetchList(relay: RelayTarget): Promise<void> {
    try {
      const res = await fetch(`${relay.url}${VALIDATORS_PATH}`, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 2_000),
      });
      if (!res.ok) {
        await res.body?.cancel().catch(() => undefined);
        this.opts.log.warn({ relay: relay.name, status: res.status }, 'validator registrations: the relay refused');
        return;
      }
      const body = (await res.json()) as unknown;
      if (!Array.isArray(body)) {
        this.opts.log.warn({ relay: relay.name }, 'validator registrations: not a JSON array');
        return;
      }
      const bySlot = new Map<bigint, ProposerDuty>();
      for (const e of body) {
        const duty = parseRegistrationEntry(e);
        if (duty) bySlot.set(duty.slot, duty);
      }
      this.lists.set(relay.name, { fetchedAt: Date.now(), bySlot });
    } catch (e) {
      this.opts.log.warn({ relay: relay.name, err: (e as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable' }, 'validator registrations: no answer');
    }
  }

  /** What `relay` listed for `slot` at its last fetch (undefined when it did not list it). */
  listed(relay: string, slot: bigint): ProposerDuty | undefined {
    return this.lists.get(relay)?.bySlot.get(slot);
  }

  /**
   * The proposer of `slot` and the relays to submit to: the relays that list the slot, grouped by
   * (pubkey, fee recipient); the largest group wins (ties: the first relay in configuration order).
   * Lists older than `maxAgeMs`, and lists without the slot older than `missRefetchMs`, are
   * fetched again first.
   *
   * @returns undefined when no relay lists a proposer for the slot.
   */
  async proposerFor(slot: bigint): Promise<SlotProposer | undefined> {
    const now = Date.now();
    const maxAge = this.opts.maxAgeMs ?? 12_000;
    const missAge = this.opts.missRefetchMs ?? 1_000;
    const stale = this.opts.relays.filter((r) => {
      const list = this.lists.get(r.name);
      if (!list) return true;
      const age = now - list.fetchedAt;
      return age >= maxAge || (!list.bySlot.has(slot) && age >= missAge);
    });
    if (stale.length > 0) await Promise.all(stale.map((r) => this.refresh(r)));
    const groups = new Map<string, SlotProposer>();
    for (const relay of this.opts.relays) {
      const duty = this.listed(relay.name, slot);
      if (!duty) continue;
      const key = `${duty.pubkey}|${duty.feeRecipient.toLowerCase()}`;
      const g = groups.get(key);
      if (g) g.relays.push(relay);
      else groups.set(key, { ...duty, relays: [relay] });
    }
    let best: SlotProposer | undefined;
    for (const g of groups.values()) if (!best || g.relays.length > best.relays.length) best = g;
    return best;
  }
}
