/**
 * A stand-in for the gateway's provider routes (docs/decisions.md "Providers"), speaking the real wire format
 * until the gateway serves them: `POST /api/v1/providers/challenge`, `POST /api/v1/providers`
 * (201, or 409 `provider_exists`), `PUT /api/v1/providers/{id}` (200, rotated secret). It checks
 * what the gateway checks: the body against `ProviderRegistration`, a single-use challenge it
 * issued for that address, the EIP-191 signature with viem `verifyMessage`, and that the endpoint
 * answers `GET` within 5 s. Errors are RFC 9457 problems with a generic `code` (`CONFLICT`, ...) and a specific `reason`, as the gateway's.
 */
import { ProviderRegistration, type ProviderRegistered } from '@acg/schemas';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getAddress, verifyMessage, type Hex } from 'viem';

export interface StandInGateway {
  url: string;
  /** Every request seen: method and path. */
  requests: { method: string; path: string }[];
  /** Registered providers by address (checksummed). */
  providers: Map<string, ProviderRegistered & { offers: unknown[] }>;
  /** When set, every route answers this status with a problem (e.g. 404 before the routes exist). */
  failWith?: { status: number; code: string };
  close(): Promise<void>;
}

const send = (res: ServerResponse, status: number, body: unknown, problem = false) => {
  res.writeHead(status, { 'content-type': problem ? 'application/problem+json' : 'application/json' });
  res.end(JSON.stringify(body));
};
/** The gateway's generic `code` of a status (its problems carry it beside the specific `reason`). */
const GENERIC_CODE: Record<number, string> = { 400: 'BAD_REQUEST', 401: 'UNAUTHORIZED', 404: 'NOT_FOUND', 409: 'CONFLICT' };
const problem = (res: ServerResponse, status: number, detail: string, extra: Record<string, unknown> = {}) =>
  send(res, status, { type: 'about:blank', title: String(status), status, detail, code: GENERIC_CODE[status] ?? 'INTERNAL_SERVER_ERROR', ...extra }, true);

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

export async function startStandInGateway(): Promise<StandInGateway> {
  const challenges = new Map<string, string>(); // message -> `<address>|<action>|<provider_id>` (single use; the gateway binds a challenge to its action)
  const providers = new Map<string, ProviderRegistered & { offers: unknown[] }>();
  const requests: { method: string; path: string }[] = [];
  let seq = 0;
  const gw: Partial<StandInGateway> = { requests, providers };

  async function checkRegistration(body: unknown, res: ServerResponse, action: 'register' | 'update', providerId = '') {
    const parsed = ProviderRegistration.safeParse(body);
    if (!parsed.success) {
      problem(res, 400, 'invalid registration', { errors: parsed.error.issues.map((i) => ({ path: i.path, message: i.message })) });
      return undefined;
    }
    const reg = parsed.data;
    const address = getAddress(reg.address);
    if (challenges.get(reg.message) !== `${address}|${action}|${providerId}`) {
      problem(res, 401, 'unknown, used or foreign challenge', { reason: 'invalid_challenge' });
      return undefined;
    }
    challenges.delete(reg.message);
    if (!(await verifyMessage({ address, message: reg.message, signature: reg.signature as Hex }))) {
      problem(res, 401, 'bad signature', { reason: 'bad_signature' });
      return undefined;
    }
    try {
      await fetch(reg.endpoint, { signal: AbortSignal.timeout(5000) });
    } catch {
      problem(res, 400, 'endpoint not reachable', { reason: 'endpoint_unreachable' });
      return undefined;
    }
    return { reg, address };
  }

  const record = (providerId: string, reg: ReturnType<typeof ProviderRegistration.parse>, address: string) => {
    const entry = {
      provider_id: providerId,
      name: reg.name,
      address,
      endpoint: reg.endpoint,
      capabilities: reg.capabilities.map((o) => ({ id: `${o.product}.${o.name}`, status: 'PILOT' as const })),
      signing_secret: `whsec_${randomBytes(24).toString('base64')}`,
      offers: reg.capabilities,
    };
    providers.set(address, entry);
    const { offers: _offers, ...answer } = entry;
    return answer;
  };

  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ method: req.method ?? '', path });
    if (gw.failWith) return problem(res, gw.failWith.status, 'failing on purpose', { reason: gw.failWith.code });
    const body = await readJson(req);
    if (req.method === 'POST' && path === '/api/v1/providers/challenge') {
      const req = body as { address: string; action?: string; provider_id?: string; name?: unknown; capabilities?: unknown };
      const address = getAddress(req.address);
      if ((req.action !== 'register' && req.action !== 'update') || req.name === undefined || req.capabilities === undefined)
        return problem(res, 400, 'a challenge names its action and the body it authorizes', { reason: 'invalid_challenge_request' });
      const nonce = randomBytes(12).toString('hex');
      const message = `127.0.0.1 wants you to register a provider with your Ethereum account:\n${address}\n\nNonce: ${nonce}\nIssued At: ${new Date().toISOString()}`;
      challenges.set(message, `${address}|${req.action}|${req.provider_id ?? ''}`);
      return send(res, 200, { message, nonce, expires_at: new Date(Date.now() + 600_000).toISOString() });
    }
    if (req.method === 'POST' && path === '/api/v1/providers') {
      const ok = await checkRegistration(body, res, 'register');
      if (!ok) return;
      const existing = providers.get(ok.address);
      if (existing) return problem(res, 409, 'this address already has a provider', { reason: 'provider_exists', provider_id: existing.provider_id });
      return send(res, 201, record(`prv_01JABCDEFGHJKMNPQRSTVWXY${String(++seq).padStart(2, '0')}`, ok.reg, ok.address));
    }
    const put = path.match(/^\/api\/v1\/providers\/(prv_[0-9A-Z]{26})$/);
    if (req.method === 'PUT' && put) {
      const ok = await checkRegistration(body, res, 'update', put[1]);
      if (!ok) return;
      const existing = providers.get(ok.address);
      if (!existing || existing.provider_id !== put[1]) return problem(res, 404, 'no such provider for this address');
      return send(res, 200, record(existing.provider_id, ok.reg, ok.address));
    }
    problem(res, 404, 'no route');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gw.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gw.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return gw as StandInGateway;
}
