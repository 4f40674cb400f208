import { randomBytes } from 'node:crypto';
import type { ProviderChallenge, ProviderChallengeRequest, ProviderOffer, ProviderRegistered, ProviderRegistration, SignedChallenge } from '@acg/schemas';
import { checkPublicUrl, WebhookUrlError, type HostResolver, type UrlPolicy } from '@acg/net-guard';
import { ulid } from 'ulid';
import { getAddress } from 'viem';
import { authorizedDigest, type ChallengeScope, type ChallengeStore } from './challenge.js';
import type { ProviderClient } from './client.js';
import { ProviderError } from './errors.js';
import { compileJsonSchema, schemaIssues } from './jsonSchema.js';
import { offerCapabilityId, type ProviderRecord, type ProviderStore } from './store.js';

/** A new Standard Webhooks signing secret: `whsec_` + 32 random bytes in base64. */
export const newSigningSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** What {@link ProviderOnboarding} uses. */
export interface ProviderOnboardingOptions {
  store: ProviderStore;
  challenges: ChallengeStore;
  client: Pick<ProviderClient, 'reachable'>;
  /** SSRF policy of endpoints (the webhook policy: `production` https + public only; `development` also loopback). */
  policy: UrlPolicy;
  /** True for ids the gateway itself serves (built-ins): a provider can never take them. */
  reservedId(id: string): boolean;
  /** DNS for endpoint checks (tests). */
  resolve?: HostResolver;
  now?: () => Date;
}

/**
 * Onboarding, update and retirement of providers (docs/decisions.md "Providers"): EIP-191 challenges,
 * offer validation (JSON Schema 2020-12 with Ajv, the example request against the input schema,
 * ids unique and not the gateway's own), the endpoint's SSRF rules and reachability, then the
 * store. Every refusal is a {@link ProviderError} with its HTTP status and stable code.
 */
export class ProviderOnboarding {
  constructor(private readonly o: ProviderOnboardingOptions) {}

  /**
   * A challenge for `req.address`, naming `host` (the gateway's public host) and what it authorizes:
   * `req.action`, `req.provider_id` (required for update and retire, refused for register) and the
   * {@link authorizedDigest} of `name`, `endpoint`, `capabilities` (required for register and update,
   * refused for retire). Throws {@link ProviderError} `invalid_challenge_request` 400 naming the field.
   */
  challenge(req: ProviderChallengeRequest, host: string): Promise<ProviderChallenge> {
    const bad = (field: string, why: string) =>
      new ProviderError('invalid_challenge_request', 400, `${field} ${why} for action ${req.action}.`, { errors: [{ path: [field], message: why }] });
    const needsBody = req.action !== 'retire';
    if (req.action === 'register' && req.provider_id !== undefined) throw bad('provider_id', 'must be absent');
    if (req.action !== 'register' && req.provider_id === undefined) throw bad('provider_id', 'is required');
    for (const field of ['name', 'endpoint', 'capabilities'] as const) {
      if (needsBody && req[field] === undefined) throw bad(field, 'is required (the signature authorizes exactly this body)');
      if (!needsBody && req[field] !== undefined) throw bad(field, 'must be absent');
    }
    const scope: ChallengeScope = {
      action: req.action,
      ...(req.provider_id ? { providerId: req.provider_id } : {}),
      ...(needsBody
        ? { digest: authorizedDigest({ name: req.name as string, endpoint: req.endpoint as string, capabilities: req.capabilities as ProviderOffer[] }) }
        : {}),
    };
    return this.o.challenges.issue(getAddress(req.address), host, scope);
  }

  /**
   * Registers a provider: 201 body with the signing secret (shown once) and its capabilities,
   * all `PILOT` until probed. Order: the signed challenge (scope `register` + body digest) before
   * any schema work, then the offers, then the nonce is used up, then reachability.
   * Throws {@link ProviderError}: the challenge errors (400/401, `challenge_mismatch` 403),
   * `schema_too_large` 413, `schema_too_deep` 422, `invalid_schema`/`invalid_example`/
   * `duplicate_offer`/`capability_exists` (reserved id) 400/409, `endpoint_refused` 400, the
   * challenge errors (400/401), `endpoint_unreachable` 422, `provider_exists` 409 (with
   * `provider_id`), `capability_exists` 409.
   */
  async register(body: ProviderRegistration): Promise<ProviderRegistered> {
    // the signature first: nothing of the body is compiled or fetched for an unsigned request
    const address = await this.o.challenges.verify(body, { action: 'register', digest: authorizedDigest(body) });
    await this.validate(body);
    await this.o.challenges.take(body);
    await this.checkReachable(body.endpoint);
    const now = this.now();
    const record: ProviderRecord = {
      provider_id: `prv_${ulid()}`,
      name: body.name,
      address,
      endpoint: body.endpoint,
      status: 'active',
      created_at: now,
      updated_at: now,
      secret: newSigningSecret(),
      offers: body.capabilities,
    };
    await this.o.store.create(record);
    return registered(record);
  }

  /**
   * Replaces a provider's name, endpoint and offers with a fresh signed challenge by its address,
   * and rotates its signing secret (the answer shows the new one once). Throws like
   * {@link register}, plus `not_found` 404 and `forbidden` 403 (signed by another address).
   */
  async update(providerId: string, body: ProviderRegistration): Promise<ProviderRegistered> {
    const signer = await this.o.challenges.verify(body, { action: 'update', providerId, digest: authorizedDigest(body) });
    const existing = await this.o.store.get(providerId);
    if (existing?.status !== 'active') throw new ProviderError('not_found', 404, `No active provider ${providerId}.`);
    if (signer.toLowerCase() !== existing.address.toLowerCase())
      throw new ProviderError('forbidden', 403, `Only ${existing.address} may change this provider.`);
    await this.validate(body);
    await this.o.challenges.take(body);
    await this.checkReachable(body.endpoint);
    const record: ProviderRecord = {
      ...existing,
      name: body.name,
      endpoint: body.endpoint,
      updated_at: this.now(),
      secret: newSigningSecret(),
      offers: body.capabilities,
    };
    await this.o.store.replace(record);
    return registered(record);
  }

  /** Retires a provider with a fresh signed challenge by its address: its capabilities leave the catalog; held money is still paid out. */
  async retire(providerId: string, signed: SignedChallenge): Promise<{ provider_id: string; status: 'retired' }> {
    const signer = await this.o.challenges.verify(signed, { action: 'retire', providerId });
    const existing = await this.o.store.get(providerId);
    if (existing?.status !== 'active') throw new ProviderError('not_found', 404, `No active provider ${providerId}.`);
    if (signer.toLowerCase() !== existing.address.toLowerCase())
      throw new ProviderError('forbidden', 403, `Only ${existing.address} may retire this provider.`);
    await this.o.challenges.take(signed);
    await this.o.store.retire(providerId, this.now());
    return { provider_id: providerId, status: 'retired' };
  }

  private now(): string {
    return (this.o.now?.() ?? new Date()).toISOString();
  }

  private async validate(body: ProviderRegistration): Promise<void> {
    const seen = new Set<string>();
    body.capabilities.forEach((offer: ProviderOffer, i: number) => {
      const id = offerCapabilityId(offer);
      if (seen.has(id))
        throw new ProviderError('duplicate_offer', 400, `The capability ${id} is offered twice.`, {
          errors: [{ path: ['capabilities', i, 'name'], message: 'duplicate id' }],
        });
      seen.add(id);
      if (offer.capability_id === undefined && this.o.reservedId(id))
        throw new ProviderError('capability_exists', 409, `The capability id ${id} is served by the gateway itself.`, { capability_ids: [id] });
      const at = (e: ProviderError) => new ProviderError(e.code, e.status, `capabilities[${i}] (${id}): ${e.message}`, e.extra);
      let validateInput: ReturnType<typeof compileJsonSchema>;
      try {
        validateInput = compileJsonSchema(offer.input_schema, 'input_schema');
        compileJsonSchema(offer.output_schema, 'output_schema');
      } catch (e) {
        throw e instanceof ProviderError ? at(e) : e;
      }
      if (offer.output_schema.type !== 'object') {
        throw at(
          new ProviderError(
            'invalid_schema',
            400,
            'output_schema must describe an object ("type": "object"): a result is a JSON object (docs/spec-notes.md 2.7).',
          ),
        );
      }
      if (!validateInput(offer.example_request)) {
        throw at(
          new ProviderError('invalid_example', 400, 'example_request does not match input_schema (the prober sends it).', {
            errors: schemaIssues(validateInput.errors).map((x) => ({ ...x, path: ['capabilities', i, 'example_request', ...x.path] })),
          }),
        );
      }
      if (offer.accepts_objective && !validateInput({ objective: 'example objective' })) {
        throw at(new ProviderError('invalid_schema', 400, 'accepts_objective is true but input_schema does not accept {"objective": "<text>"}.'));
      }
    });
    await this.validateJoins(body.capabilities);
    try {
      await checkPublicUrl(body.endpoint, this.o.policy, { field: 'endpoint', ...(this.o.resolve ? { resolve: this.o.resolve } : {}) });
    } catch (e) {
      if (e instanceof WebhookUrlError) throw new ProviderError('endpoint_refused', 400, e.message);
      throw e;
    }
  }

  /**
   * Each offer that joins a contract (`capability_id`; docs/marketplace.md "Contracts and offers"):
   * the contract must be offered by a provider (a built-in or unknown id is 404 `unknown_contract`),
   * and the offer's `input_schema` must accept the contract's `example_request` (the request every
   * offer of it is probed with), else 422 `contract_mismatch` with the schema issues. Whether its
   * output fits the contract's `output_schema` is checked by its probes before it is routed to.
   */
  private async validateJoins(offers: readonly ProviderOffer[]): Promise<void> {
    for (const [i, offer] of offers.entries()) {
      if (offer.capability_id === undefined) continue;
      const id = offer.capability_id;
      const contract = this.o.reservedId(id) ? undefined : await this.o.store.contract(id);
      if (!contract) {
        throw new ProviderError('unknown_contract', 404, `capabilities[${i}]: no provider contract ${id} to join (built-in capabilities take no offers).`, {
          capability_ids: [id],
        });
      }
      const validateInput = compileJsonSchema(offer.input_schema, 'input_schema');
      if (!validateInput(contract.offer.example_request)) {
        throw new ProviderError('contract_mismatch', 422, `capabilities[${i}] (${id}): input_schema does not accept the contract's example_request.`, {
          capability_ids: [id],
          errors: schemaIssues(validateInput.errors).map((x) => ({ ...x, path: ['capabilities', i, 'input_schema', ...x.path] })),
        });
      }
    }
  }

  private async checkReachable(endpoint: string): Promise<void> {
    const r = await this.o.client.reachable(endpoint);
    if (!r.ok) throw new ProviderError('endpoint_unreachable', 422, `GET ${endpoint} got no HTTP answer (${r.reason}); start the provider before registering.`);
  }
}

/** The registration answer of a record: capabilities start `PILOT`. */
function registered(r: ProviderRecord): ProviderRegistered {
  return {
    provider_id: r.provider_id,
    name: r.name,
    address: r.address,
    endpoint: r.endpoint,
    capabilities: r.offers.map((o) => ({ id: offerCapabilityId(o), status: 'PILOT' as const })),
    signing_secret: r.secret,
  };
}
