import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll } from 'vitest';
import type { RunningTestGateway } from './harness.js';
import { registerTestProvider, startTestProvider, type Answer, type ReceivedCall, type TestProvider } from './providerServer.js';

/** A provider of a test file, registered at its gateway by {@link useRegisteredProvider}. */
export interface RegisteredProvider {
  /** The provider's owner: a fresh account that registered it and signs its results. */
  owner: PrivateKeyAccount;
  /** The provider's endpoint (its received calls, its answers). */
  readonly server: TestProvider;
  /** The `provider_id` the registration answered. */
  readonly id: string;
}

/**
 * The test file's provider: registers a `beforeAll` that starts an endpoint answering with `answer`
 * ({@link startTestProvider}) and registers it at `t` as a fresh owner with `registration` (name,
 * capabilities; {@link registerTestProvider}), and an `afterAll` that stops the endpoint. Call it after
 * `useTestGateway` (its hooks run after the gateway started). `server` and `id` throw before the hook ran.
 */
export function useRegisteredProvider(
  t: RunningTestGateway,
  answer: (call: ReceivedCall) => Answer,
  registration: Parameters<typeof registerTestProvider>[3],
): RegisteredProvider {
  const owner = privateKeyToAccount(generatePrivateKey());
  let registered: { server: TestProvider; id: string } | undefined;
  let server: TestProvider | undefined;
  beforeAll(async () => {
    server = await startTestProvider(answer);
    registered = { server, id: (await registerTestProvider(t.url, owner, server, registration)).provider_id };
  });
  afterAll(async () => {
    await server?.close();
  });
  const started = () => {
    if (!registered) throw new Error('the test provider registers in beforeAll: read it inside a hook or a test');
    return registered;
  };
  return {
    owner,
    get server() {
      return started().server;
    },
    get id() {
      return started().id;
    },
  };
}
