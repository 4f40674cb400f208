import { ProviderCallRequest, type ProviderCallResponse, type ProviderOfferInput } from '@acg/schemas';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { Address, LocalAccount } from 'viem';
import type { z } from 'zod';
import { ProviderRunError, toOffer, type ProviderCapability } from './define.js';
import { problem, sendJson, sendProblem, type Problem, type ProblemIssue } from './problem.js';
import { signResult } from './resultSignature.js';

/** Largest request body the kit reads by default: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Where the kit logs (pino's `Logger` fits): one line per call, and every failure in full. */
export interface ProviderLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Options of {@link createProvider}. */
export interface CreateProviderOptions {
  /** What this provider serves (from {@link defineProviderCapability}); ids must be unique. */
  capabilities: readonly ProviderCapability[];
  /**
   * The provider's wallet (viem local account): its address is the payout address registered at
   * onboarding, and it signs every result (EIP-191). It never sends a transaction.
   */
  account: LocalAccount;
  /** The `whsec_...` secret from registration; may be set later with {@link Provider.setSigningSecret} (until then signed calls get 503). */
  signingSecret?: string;
  /** Largest request body in bytes (default {@link DEFAULT_MAX_BODY_BYTES}); larger ones get 413. */
  maxBodyBytes?: number;
  /** Logger (default: none). */
  log?: ProviderLog;
}

/** A listening provider from {@link Provider.listen}. */
export interface RunningProvider {
  /** `http://<host>:<port>` (the endpoint to register, when the gateway reaches this host directly). */
  url: string;
  port: number;
  server: Server;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** A provider endpoint: see {@link createProvider}. */
export interface Provider {
  /** The payout and result-signing address. */
  readonly address: Address;
  /** The capabilities served, by id. */
  readonly capabilities: ReadonlyMap<string, ProviderCapability>;
  /** Node `(req, res)` listener answering the gateway (mount it at the endpoint's path, or use {@link listen}). */
  handler(req: IncomingMessage, res: ServerResponse): void;
  /** Listens on `host` (default `127.0.0.1`) and `port` (0 = a free one). */
  listen(port: number, host?: string): Promise<RunningProvider>;
  /** The offers to register (schema `ProviderOffer`): JSON Schema 2020-12 of each input (io: input) and output. */
  offers(): ProviderOfferInput[];
  /**
   * Sets (or rotates) the `whsec_...` secret calls must be signed with; the one from
   * `POST /api/v1/providers` or `PUT /api/v1/providers/{id}`.
   * @throws {Error} when the secret is not `whsec_` + base64 of at least one byte.
   */
  setSigningSecret(secret: string): void;
  /** True once a signing secret is set. */
  hasSigningSecret(): boolean;
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function zodIssues(error: z.ZodError, prefix: (string | number)[]): ProblemIssue[] {
  return error.issues.map((i) => ({ path: [...prefix, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))], message: i.message, code: i.code }));
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new BodyTooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (done) return;
      done = true;
      reject(err);
    });
  });
}

/**
 * Creates a provider endpoint (docs/decisions.md "Providers"): the HTTP side of the contract between the
 * gateway and a third party.
 *
 * - `GET` (any path) → 200 `{ok: true, capabilities: [ids]}`: the gateway's reachability check.
 * - `POST` with body `{capability_id, execution_id, input}` (schema `ProviderCallRequest`) and
 *   Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) signed with
 *   the signing secret over the exact body bytes (`standardwebhooks`, 5 minutes tolerance):
 *   - no secret set yet → 503 `not_registered`; body over `maxBodyBytes` → 413;
 *   - missing, wrong or stale signature → 401 `invalid_signature`;
 *   - not JSON, or not a `ProviderCallRequest` → 400; `webhook-id` ≠ `execution_id` → 400
 *     `webhook_id_mismatch`;
 *   - unknown `capability_id` → 404 `unknown_capability`; input invalid against the capability's
 *     zod schema → 400 `invalid_input` with `errors` (paths from the body root, e.g. `["input","chain"]`);
 *   - `run` throws {@link ProviderRunError} → its status and code; passes `timeout_ms` → 504
 *     `timeout`; throws anything else, or returns a result invalid against `output` → 500;
 *   - success → 200 `{result, signature}` (schema `ProviderCallResponse`): `signature` is the
 *     EIP-191 signature by `account` of `acg-result:<execution_id>:<result_sha256>`.
 * - other methods → 405. Errors are RFC 9457 `application/problem+json` with a `code`.
 *
 * The gateway's probes are sent exactly as paid calls (docs/trust-v1.md "Probes"): a provider cannot tell them apart.
 *
 * @throws {Error} when two capabilities share an id, or `signingSecret` is malformed.
 *
 * @example
 * const provider = createProvider({ capabilities: [echo], account: privateKeyToAccount(key) });
 * const { url } = await provider.listen(8090);
 * await onboard({ gatewayUrl, account, endpoint: url, name: 'Echo Labs', provider }); // sets the secret
 */
export function createProvider(options: CreateProviderOptions): Provider {
  const { account, log } = options;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const capabilities = new Map<string, ProviderCapability>();
  for (const c of options.capabilities) {
    if (capabilities.has(c.id)) throw new Error(`createProvider: two capabilities have the id ${c.id}`);
    capabilities.set(c.id, c);
  }
  let webhook: Webhook | undefined;
  const setSigningSecret = (secret: string) => {
    if (typeof secret !== 'string' || !/^whsec_[A-Za-z0-9+/=]+$/.test(secret))
      throw new Error('setSigningSecret: the secret must be whsec_ followed by base64');
    webhook = new Webhook(secret);
  };
  if (options.signingSecret !== undefined) setSigningSecret(options.signingSecret);

  async function call(req: IncomingMessage, res: ServerResponse): Promise<{ status: number; capabilityId?: string; executionId?: string }> {
    const fail = (p: Problem) => {
      sendProblem(res, p);
      return { status: p.status };
    };
    let body: Buffer;
    try {
      body = await readBody(req, maxBodyBytes);
    } catch (e) {
      if (e instanceof BodyTooLarge) {
        // stop reading: answer, then drop the connection rather than drain a large upload
        res.once('finish', () => req.destroy());
        return fail(problem(413, `The body is larger than ${maxBodyBytes} bytes.`, { code: 'body_too_large' }));
      }
      throw e;
    }
    const verifier = webhook;
    if (!verifier) return fail(problem(503, 'This provider has no signing secret yet: it is not registered with the gateway.', { code: 'not_registered' }));
    const webhookId = headerValue(req, 'webhook-id') ?? '';
    try {
      verifier.verify(
        body,
        {
          'webhook-id': webhookId,
          'webhook-timestamp': headerValue(req, 'webhook-timestamp') ?? '',
          'webhook-signature': headerValue(req, 'webhook-signature') ?? '',
        },
        { jsonParse: false },
      );
    } catch (e) {
      if (!(e instanceof WebhookVerificationError)) throw e;
      return fail(problem(401, `The Standard Webhooks signature does not verify: ${e.message}.`, { code: 'invalid_signature' }));
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      return fail(problem(400, 'The body is not JSON.', { code: 'invalid_json' }));
    }
    const parsed = ProviderCallRequest.safeParse(json);
    if (!parsed.success)
      return fail(
        problem(400, 'The body is not a provider call {capability_id, execution_id, input}.', { code: 'invalid_request', errors: zodIssues(parsed.error, []) }),
      );
    const { capability_id: capabilityId, execution_id: executionId, input } = parsed.data;
    if (webhookId !== executionId) {
      return fail(problem(400, 'The webhook-id header must equal execution_id.', { code: 'webhook_id_mismatch' }));
    }
    const capability = capabilities.get(capabilityId);
    if (!capability)
      return { ...fail(problem(404, `This provider has no capability ${capabilityId}.`, { code: 'unknown_capability' })), capabilityId, executionId };
    const inputResult = capability.input.safeParse(input);
    if (!inputResult.success) {
      return {
        ...fail(problem(400, `The input is not valid for ${capabilityId}.`, { code: 'invalid_input', errors: zodIssues(inputResult.error, ['input']) })),
        capabilityId,
        executionId,
      };
    }

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`timed out after ${capability.timeout_ms} ms`)), capability.timeout_ms);
    const onClose = () => {
      if (!res.writableEnded) controller.abort(new Error('the gateway closed the connection'));
    };
    res.once('close', onClose);
    const ids = { capabilityId, executionId };
    try {
      const output = await capability.run(inputResult.data, { executionId, signal: controller.signal });
      const checked = capability.output.safeParse(output);
      if (!checked.success) {
        log?.error({ ...ids, errors: zodIssues(checked.error, ['result']) }, 'the capability returned a result invalid against its output schema');
        return { ...fail(problem(500, `${capabilityId} returned a result that does not match its output schema.`, { code: 'invalid_result' })), ...ids };
      }
      const result = checked.data;
      const { signature } = await signResult(account, executionId, result);
      const answer: ProviderCallResponse = { result, signature };
      sendJson(res, 200, answer);
      return { status: 200, ...ids };
    } catch (e) {
      if (e instanceof ProviderRunError) {
        const status = e.status >= 400 && e.status <= 599 ? e.status : 500;
        return { ...fail(problem(status, e.shortMessage, { code: e.code })), ...ids };
      }
      if (controller.signal.aborted) {
        return { ...fail(problem(504, `${capabilityId} did not finish within ${capability.timeout_ms} ms.`, { code: 'timeout' })), ...ids };
      }
      log?.error({ ...ids, err: String((e as Error)?.stack ?? e).slice(0, 2000) }, 'the capability failed');
      return { ...fail(problem(500, `${capabilityId} failed.`, { code: 'capability_failed' })), ...ids };
    } finally {
      clearTimeout(timer);
      res.off('close', onClose);
    }
  }

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    if (req.method === 'GET' || req.method === 'HEAD') {
      sendJson(res, 200, { ok: true, capabilities: [...capabilities.keys()] });
      return;
    }
    if (req.method !== 'POST') {
      sendProblem(res, problem(405, 'Use POST for calls and GET to check reachability.', { code: 'method_not_allowed' }), { allow: 'GET, HEAD, POST' });
      return;
    }
    call(req, res).then(
      (outcome) => {
        const line = {
          capability_id: outcome.capabilityId,
          execution_id: outcome.executionId,
          status: outcome.status,
          ms: Math.round(performance.now() - started),
        };
        if (outcome.status < 400) log?.info(line, 'call');
        else log?.warn(line, 'call refused or failed');
      },
      (e: unknown) => {
        log?.error({ err: String((e as Error)?.stack ?? e).slice(0, 2000) }, 'provider handler error');
        sendProblem(res, problem(500, 'The provider could not handle the request.', { code: 'internal_error' }));
      },
    );
  };

  return {
    address: account.address,
    capabilities,
    handler,
    setSigningSecret,
    hasSigningSecret: () => webhook !== undefined,
    offers: () => [...capabilities.values()].map(toOffer),
    listen: (port, host = '127.0.0.1') =>
      new Promise<RunningProvider>((resolve, reject) => {
        const server = createServer(handler);
        // a call may run up to the largest timeout_ms; headers must come quickly
        const longest = Math.max(30_000, ...[...capabilities.values()].map((c) => c.timeout_ms));
        server.requestTimeout = longest + 10_000;
        server.headersTimeout = 10_000;
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const bound = (server.address() as AddressInfo).port;
          const shown = host.includes(':') ? `[${host}]` : host;
          resolve({
            url: `http://${shown}:${bound}`,
            port: bound,
            server,
            close: () =>
              new Promise<void>((done) => {
                server.close(() => done());
                server.closeAllConnections();
              }),
          });
        });
      }),
  };
}
