import { randomBytes } from 'node:crypto';
import type { RedisKeys } from '@acg/redis';
import type { ProviderOffer } from '@acg/schemas';
import type { SecretBox } from '@acg/secrets';
import type { Redis } from 'ioredis';
import { ProviderError } from './errors.js';

/** A provider as stored (docs/decisions.md "Providers"): the signing secret in plain text here, sealed at rest when a SecretBox is configured. */
export interface ProviderRecord {
  provider_id: string;
  name: string;
  /** EIP-55 payout address on the payment chain (also the address that signs challenges). */
  address: `0x${string}`;
  endpoint: string;
  status: 'active' | 'retired';
  created_at: string;
  updated_at: string;
  /** `whsec_...`: the Standard Webhooks secret the gateway signs calls with. */
  secret: string;
  offers: ProviderOffer[];
}

/** The capability id of an offer: the contract it joins (`capability_id`), or the one it creates, `<product>.<name>`. */
export const offerCapabilityId = (o: Pick<ProviderOffer, 'product' | 'name' | 'capability_id'>) => o.capability_id ?? `${o.product}.${o.name}`;

/** Whether an offer creates its contract (`name`) rather than joining one (`capability_id`): only creators claim ids. */
const creates = (o: ProviderOffer) => o.capability_id === undefined;

const RELEASE_LOCK = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

/**
 * Providers in Redis, every key under the `{prov}` hash tag (one Redis Cluster slot: the
 * registration's keys are written together in one MULTI):
 * - `{prov}:p:<id>`: hash of the record (offers as JSON, secret sealed);
 * - `{prov}:addr:<address>`: the active provider of an address (one per address);
 * - `{prov}:cap:<capability_id>`: which provider created a contract (unique across providers; an
 *   offer that joins a contract claims nothing);
 * - `{prov}:active`: set of active provider ids;
 * - `{prov}:changed`: pub/sub channel, a message after every change (gateways and workers reload).
 *
 * Registration, update and retirement check the address and capability-id claims and write them
 * under one short lock (`{prov}:lock`, SET NX PX with a random token, released by
 * compare-and-delete), so two registrations racing for one id cannot both win: the loser gets a
 * 409. These writes are rare (onboarding), so one lock costs nothing measurable.
 */
export class ProviderStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly secretBox?: SecretBox,
  ) {}

  /** The pub/sub channel announcing changes. */
  channel(): string {
    return this.keys.providers('changed');
  }

  async get(providerId: string): Promise<ProviderRecord | undefined> {
    return this.decode(await this.redis.hgetall(this.keys.providers('p', providerId)));
  }

  /** The active provider of `address`, if any. */
  async byAddress(address: string): Promise<ProviderRecord | undefined> {
    const id = await this.redis.get(this.keys.providers('addr', address.toLowerCase()));
    return id ? this.get(id) : undefined;
  }

  /**
   * Every active provider, in registration order (`created_at`, then `provider_id`): the order in
   * which a contract's offers are listed, and so the one that picks the offer defining a contract
   * whose creator retired (the first that joined; docs/marketplace.md "Contracts and offers").
   */
  async active(): Promise<ProviderRecord[]> {
    const ids = await this.redis.smembers(this.keys.providers('active'));
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.providers('p', id));
    const rows = (await pipeline.exec()) ?? [];
    return rows
      .map(([, h]) => this.decode(h as Record<string, string>))
      .filter((r): r is ProviderRecord => r?.status === 'active')
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.provider_id.localeCompare(b.provider_id));
  }

  /**
   * Stores a new provider. Throws {@link ProviderError} `provider_exists` 409 (with its
   * `provider_id`) when the address already has an active provider, `capability_exists` 409 when
   * an offer's id belongs to another provider, `busy` 503 when the lock stays taken.
   */
  async create(record: ProviderRecord): Promise<void> {
    await this.locked(async () => {
      const existing = await this.redis.get(this.keys.providers('addr', record.address.toLowerCase()));
      if (existing) {
        throw new ProviderError(
          'provider_exists',
          409,
          `The address ${record.address} already has a provider; update it with PUT /api/v1/providers/${existing}.`,
          {
            provider_id: existing,
          },
        );
      }
      await this.checkClaims(record.provider_id, record.offers);
      const m = this.redis.multi();
      m.hset(this.keys.providers('p', record.provider_id), this.encode(record));
      m.set(this.keys.providers('addr', record.address.toLowerCase()), record.provider_id);
      for (const o of record.offers.filter(creates)) m.set(this.keys.providers('cap', offerCapabilityId(o)), record.provider_id);
      m.sadd(this.keys.providers('active'), record.provider_id);
      await m.exec();
    });
    await this.announce();
  }

  /** Replaces a provider's name, endpoint, secret and offers; releases ids it no longer offers. Throws like {@link create}. */
  async replace(record: ProviderRecord): Promise<void> {
    await this.locked(async () => {
      const before = await this.get(record.provider_id);
      if (before?.status !== 'active') throw new ProviderError('not_found', 404, `No active provider ${record.provider_id}.`);
      await this.checkClaims(record.provider_id, record.offers);
      const kept = new Set(record.offers.filter(creates).map(offerCapabilityId));
      const m = this.redis.multi();
      for (const o of before.offers.filter(creates)) if (!kept.has(offerCapabilityId(o))) m.del(this.keys.providers('cap', offerCapabilityId(o)));
      for (const id of kept) m.set(this.keys.providers('cap', id), record.provider_id);
      m.hset(this.keys.providers('p', record.provider_id), this.encode(record));
      await m.exec();
    });
    await this.announce();
  }

  /** Retires a provider: its capabilities leave the catalog, its ids and address are free again. Its ledger is untouched. */
  async retire(providerId: string, at: string): Promise<void> {
    await this.locked(async () => {
      const before = await this.get(providerId);
      if (before?.status !== 'active') throw new ProviderError('not_found', 404, `No active provider ${providerId}.`);
      const m = this.redis.multi();
      for (const o of before.offers.filter(creates)) m.del(this.keys.providers('cap', offerCapabilityId(o)));
      m.del(this.keys.providers('addr', before.address.toLowerCase()));
      m.srem(this.keys.providers('active'), providerId);
      m.hset(this.keys.providers('p', providerId), 'status', 'retired', 'updated_at', at);
      await m.exec();
    });
    await this.announce();
  }

  /** Counts one call of a provider capability, and a failure when `ok` is false. */
  async countCall(capabilityId: string, ok: boolean): Promise<void> {
    const key = this.keys.providers('stats', capabilityId);
    const m = this.redis.multi().hincrby(key, 'calls', 1);
    if (!ok) m.hincrby(key, 'failures', 1);
    await m.exec();
  }

  /** Calls and failures of a provider capability since it was first offered. */
  async counts(capabilityId: string): Promise<{ calls: number; failures: number }> {
    const [calls, failures] = await this.redis.hmget(this.keys.providers('stats', capabilityId), 'calls', 'failures');
    return { calls: Number(calls ?? 0), failures: Number(failures ?? 0) };
  }

  private async announce(): Promise<void> {
    await this.redis.publish(this.channel(), String(Date.now()));
  }

  /**
   * The offer that defines contract `capabilityId` and its provider: the active offer that created it,
   * or while its creator is retired the first offer that joined it (registration order, as
   * {@link active}); undefined when no provider offers it (docs/marketplace.md "Contracts and offers").
   */
  async contract(capabilityId: string): Promise<{ record: ProviderRecord; offer: ProviderOffer } | undefined> {
    const owner = await this.redis.get(this.keys.providers('cap', capabilityId));
    const record = owner ? await this.get(owner) : undefined;
    const offer = record?.status === 'active' ? record.offers.find((o) => creates(o) && offerCapabilityId(o) === capabilityId) : undefined;
    if (record && offer) return { record, offer };
    for (const r of await this.active()) {
      const joined = r.offers.find((o) => offerCapabilityId(o) === capabilityId);
      if (joined) return { record: r, offer: joined };
    }
    return undefined;
  }

  private async checkClaims(providerId: string, offers: readonly ProviderOffer[]): Promise<void> {
    if (offers.filter(creates).length === 0) return;
    const ids = offers.filter(creates).map(offerCapabilityId);
    const owners = await this.redis.mget(...ids.map((id) => this.keys.providers('cap', id)));
    const taken = ids.filter((_, i) => owners[i] && owners[i] !== providerId);
    if (taken.length > 0) {
      throw new ProviderError('capability_exists', 409, `The capability id ${taken.join(', ')} is taken by another provider.`, { capability_ids: taken });
    }
  }

  private async locked<T>(fn: () => Promise<T>): Promise<T> {
    const key = this.keys.providers('lock');
    const token = randomBytes(12).toString('hex');
    for (let attempt = 0; ; attempt++) {
      if (await this.redis.set(key, token, 'PX', 5_000, 'NX')) break;
      if (attempt >= 40) throw new ProviderError('busy', 503, 'Another provider registration is in progress; retry in a moment.');
      await new Promise((r) => setTimeout(r, 50));
    }
    try {
      return await fn();
    } finally {
      await this.redis.eval(RELEASE_LOCK, 1, key, token).catch(() => undefined);
    }
  }

  private encode(r: ProviderRecord): Record<string, string> {
    return {
      provider_id: r.provider_id,
      name: r.name,
      address: r.address,
      endpoint: r.endpoint,
      status: r.status,
      created_at: r.created_at,
      updated_at: r.updated_at,
      secret: this.secretBox ? this.secretBox.seal(r.secret) : r.secret,
      offers: JSON.stringify(r.offers),
    };
  }

  private decode(h: Record<string, string> | null | undefined): ProviderRecord | undefined {
    if (!h?.provider_id) return undefined;
    return {
      provider_id: h.provider_id,
      name: h.name,
      address: h.address as `0x${string}`,
      endpoint: h.endpoint,
      status: h.status === 'retired' ? 'retired' : 'active',
      created_at: h.created_at,
      updated_at: h.updated_at,
      secret: this.secretBox ? this.secretBox.open(h.secret) : h.secret,
      offers: JSON.parse(h.offers) as ProviderOffer[],
    };
  }
}
