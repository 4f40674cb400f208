import { afterAll, beforeAll } from 'vitest';
import { startTestGateway, type RunningTestGateway, type TestGateway, type TestGatewayOptions } from './harness.js';

/**
 * The test file's gateway: registers a `beforeAll` that starts it with `opts` ({@link startTestGateway})
 * and an `afterAll` that closes it, and returns a handle whose fields read the running gateway (they
 * throw outside hooks and tests, before it started). Hooks registered after this call see it started.
 */
export function useTestGateway(opts: TestGatewayOptions = {}): RunningTestGateway {
  let started: TestGateway | undefined;
  beforeAll(async () => {
    started = await startTestGateway(opts);
  });
  afterAll(async () => {
    await started?.close();
  });
  return new Proxy({} as RunningTestGateway, {
    get(_, field) {
      if (!started) throw new Error('the test gateway starts in beforeAll: read it inside a hook or a test');
      return started[field as keyof RunningTestGateway];
    },
  });
}
