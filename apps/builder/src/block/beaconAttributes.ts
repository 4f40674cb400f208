import type { Logger } from 'pino';
import { getAddress, type Hash, type Hex } from 'viem';
import type { PayloadAttributes } from './payloadAttributes.js';

/** The payload attributes of one proposal: its slot, the parent it builds on, and the attributes. */
export interface SlotAttributes extends PayloadAttributes {
  slot: bigint;
  parentBlockHash: Hash;
  parentBlockNumber: bigint;
}

/** Path of the beacon node API's event stream (Server-Sent Events). */
export const BEACON_EVENTS_PATH = '/eth/v1/events?topics=payload_attributes';

const HASH32 = /^0x[0-9a-fA-F]{64}$/;
const DECIMAL = /^[0-9]{1,20}$/;

/**
 * Reads one `payload_attributes` event's JSON (beacon node API, `{version, data: {proposal_slot,
 * parent_block_number, parent_block_hash, payload_attributes: {timestamp, prev_randao,
 * withdrawals, parent_beacon_block_root}}}`). Undefined when malformed.
 */
export function parsePayloadAttributesEvent(json: unknown): SlotAttributes | undefined {
  const d = (json as { data?: Record<string, unknown> } | null)?.data;
  const a = d?.payload_attributes as Record<string, unknown> | undefined;
  if (!d || !a) return undefined;
  const { proposal_slot: slot, parent_block_number: number, parent_block_hash: parent } = d as Record<string, string>;
  const { timestamp, prev_randao: randao, parent_beacon_block_root: root } = a as Record<string, string>;
  if (![slot, number, timestamp].every((v) => typeof v === 'string' && DECIMAL.test(v))) return undefined;
  if (![parent, randao, root].every((v) => typeof v === 'string' && HASH32.test(v))) return undefined;
  const withdrawals = Array.isArray(a.withdrawals) ? (a.withdrawals as Record<string, string>[]) : [];
  try {
    return {
      slot: BigInt(slot),
      parentBlockHash: parent.toLowerCase() as Hash,
      parentBlockNumber: BigInt(number),
      timestamp: BigInt(timestamp),
      prevRandao: randao.toLowerCase() as Hash,
      parentBeaconBlockRoot: root.toLowerCase() as Hash,
      withdrawals: withdrawals.map((w) => ({
        index: BigInt(w.index),
        validatorIndex: BigInt(w.validator_index),
        address: getAddress(w.address as Hex),
        amount: BigInt(w.amount),
      })),
    };
  } catch {
    return undefined;
  }
}

/**
 * The payload attributes of the coming proposals, from a beacon node (`BEACON_API_URL`): a
 * subscription to its `payload_attributes` events (`GET /eth/v1/events?topics=payload_attributes`,
 * Server-Sent Events), kept per parent block hash for the last 64 proposals, reconnecting after
 * 1 s when the stream ends or fails. The block of a slot commits to them (`prevRandao`,
 * `parentBeaconBlockRoot`, withdrawals, timestamp); a relay refuses a block built with others.
 */
export class BeaconPayloadAttributes {
  private readonly byParent = new Map<string, SlotAttributes>();
  private abort?: AbortController;
  private stopped = true;

  constructor(private readonly opts: { beaconUrl: string; log: Logger }) {}

  /** Starts the subscription (returns at once). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  /** The attributes of the proposal building on `parentHash`, when the beacon node announced it. */
  forParent(parentHash: Hash): SlotAttributes | undefined {
    return this.byParent.get(parentHash.toLowerCase());
  }

  /** Stores one announced proposal (what each event does); the oldest beyond 64 are forgotten. */
  add(a: SlotAttributes): void {
    this.byParent.set(a.parentBlockHash, a);
    while (this.byParent.size > 64) this.byParent.delete(this.byParent.keys().next().value as string);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.abort = new AbortController();
      try {
        const res = await fetch(`${this.opts.beaconUrl.replace(/\/$/, '')}${BEACON_EVENTS_PATH}`, {
          headers: { accept: 'text/event-stream' },
          signal: this.abort.signal,
        });
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        const decoder = new TextDecoder();
        let buffer = '';
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            this.onEvent(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf('\n\n');
          }
        }
      } catch (e) {
        if (!this.stopped) this.opts.log.warn({ err: String((e as Error).message).slice(0, 120) }, 'beacon payload_attributes stream failed');
      }
      if (!this.stopped) await new Promise((r) => setTimeout(r, 1_000).unref());
    }
  }

  private onEvent(block: string): void {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.replace(/\r/g, '').split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (event !== 'payload_attributes' || data.length === 0) return;
    try {
      const parsed = parsePayloadAttributesEvent(JSON.parse(data.join('\n')));
      if (parsed) this.add(parsed);
    } catch {
      // a malformed event is skipped
    }
  }
}
