import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resultSha256, resultSignatureMessage } from '@acg/provider-kit';
import { Webhook } from 'standardwebhooks';
import type { LocalAccount } from 'viem';

/** One call the test provider received: headers, parsed body, and whether its Standard Webhooks signature verified with the current secret. */
export interface ReceivedCall {
  headers: IncomingHttpHeaders;
  body: { capability_id: string; execution_id: string; input: unknown };
  verified: boolean;
}

/** How the test provider answers a verified call (status and JSON body, after `delayMs`; or `rawBody` sent as is), or `hang` to never answer within the test's timeouts. */
export type Answer = { status: number; body: unknown; delayMs?: number } | { status: number; rawBody: string } | 'hang';

/** An upper-casing provider's answer: 200 with `{ result: { upper } }`, the call's `input.text` upper-cased. */
export const upperCaseAnswer = (call: ReceivedCall): Answer => ({
  status: 200,
  body: { result: { upper: String((call.body.input as { text: string }).text).toUpperCase() } },
});

/**
 * The capability entry of a provider registration (`registerProvider` body) that {@link upperCaseAnswer}
 * serves: `name`, `price_usdc` (decimal USDC string, e.g. `'0.5'`), input `{ text: string }`, output
 * `{ upper: string }`, example request `{ text: 'probe' }`.
 */
export const upperCaseCapability = (name: string, price_usdc: string) => ({
  name,
  description: 'Upper-cases text.',
  price_usdc,
  input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  output_schema: { type: 'object', properties: { upper: { type: 'string' } }, required: ['upper'] },
  example_request: { text: 'probe' },
});

/**
 * The capability entry of a provider registration (`registerProvider` body) of an echo capability:
 * `name`, price 0.001 USDC, input `{ text: string }` (required), output `{ text?: string }`,
 * example request `{ text: 'probe' }`, timeout 1,000 ms.
 */
export const echoCapability = (name: string) => ({
  name,
  description: 'Echoes.',
  price_usdc: '0.001',
  input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  output_schema: { type: 'object', properties: { text: { type: 'string' } } },
  example_request: { text: 'probe' },
  timeout_ms: 1000,
});

/**
 * A provider endpoint speaking the gateway's wire format (docs/decisions.md "Providers"): GET answers 200
 * (reachability), POST verifies the Standard Webhooks signature with the `standardwebhooks`
 * library and answers with `answer(call)`; an unverified call gets 401.
 */
export async function startTestProvider(answer: (call: ReceivedCall) => Answer) {
  const secrets = new Set<string>();
  /** capability id → the provider account that signs its results (EIP-191, as the provider kit does) */
  const signers = new Map<string, LocalAccount>();
  const calls: ReceivedCall[] = [];
  const hanging = new Set<() => void>();
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let verified = false;
      try {
        for (const secret of secrets) {
          try {
            new Webhook(secret).verify(raw, req.headers as Record<string, string>);
            verified = true;
          } catch {
            // another provider's secret
          }
        }
      } catch {
        verified = false;
      }
      const call: ReceivedCall = { headers: req.headers, body: JSON.parse(raw), verified };
      calls.push(call);
      if (!verified) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"detail":"bad signature"}');
        return;
      }
      const a = answer(call);
      if (a === 'hang') {
        const end = () => res.destroy();
        hanging.add(end);
        return;
      }
      if ('rawBody' in a) {
        res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.rawBody);
        return;
      }
      void (async () => {
        if (a.delayMs) await new Promise((r) => setTimeout(r, a.delayMs));
        const body = a.body as { result?: unknown; signature?: string } | null;
        const signer = signers.get(call.body.capability_id);
        if (a.status === 200 && signer && body && typeof body === 'object' && 'result' in body && body.signature === undefined) {
          body.signature = await signer.signMessage({ message: resultSignatureMessage(call.body.execution_id, resultSha256(body.result)) });
        }
        res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/acg`,
    calls,
    /** Signs the results of these capabilities as `account` (the provider's registered address). */
    signAs(account: LocalAccount, capabilityIds: string[]) {
      for (const id of capabilityIds) signers.set(id, account);
    },
    /** Accepts calls signed with `s` too (one server stands in for several providers). */
    setSecret(s: string) {
      secrets.add(s);
    },
    async close() {
      for (const end of hanging) end();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * Registers a provider through the public API as a third party does: `POST /api/v1/providers/challenge`
 * (action `register` and the body), EIP-191 signature of the message by `account`, then `POST /api/v1/providers` with `body` (name,
 * endpoint, capabilities). Returns status and parsed body.
 */
export async function registerProvider(
  baseUrl: string,
  account: LocalAccount,
  body: Record<string, unknown>,
): Promise<{ status: number; body: any; headers: Headers }> {
  const post = async (url: string, json: unknown) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };
  // the challenge authorizes this action and exactly this body (name, endpoint, capabilities)
  const c = await post(`${baseUrl}/api/v1/providers/challenge`, { address: account.address, action: 'register', ...body });
  if (c.status !== 200) return c; // the body was refused already (zod), before any signature
  return post(`${baseUrl}/api/v1/providers`, {
    address: account.address,
    message: c.body.message,
    signature: await account.signMessage({ message: c.body.message }),
    ...body,
  });
}

/** A provider endpoint started by {@link startTestProvider}. */
export type TestProvider = Awaited<ReturnType<typeof startTestProvider>>;

/**
 * Registers `provider` through the public API ({@link registerProvider}) as `owner` with `body` (name,
 * capabilities; `endpoint` defaults to the provider's URL), then hands the provider its signing secret
 * and lets `owner` sign the results of every registered capability (`intelligence.<name>`). Resolves
 * with the registration's body (`provider_id`, `signing_secret`, …); throws when it is not 201.
 */
export async function registerTestProvider(
  baseUrl: string,
  owner: LocalAccount,
  provider: TestProvider,
  body: { name: string; endpoint?: string; capabilities: { name: string; [field: string]: unknown }[] },
): Promise<any> {
  const r = await registerProvider(baseUrl, owner, { endpoint: provider.url, ...body });
  if (r.status !== 201) throw new Error(`provider registration: ${r.status} ${JSON.stringify(r.body)}`);
  provider.setSecret(r.body.signing_secret);
  provider.signAs(
    owner,
    body.capabilities.map((c) => `intelligence.${c.name}`),
  );
  return r.body;
}
