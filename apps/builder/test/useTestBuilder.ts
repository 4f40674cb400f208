import { afterAll, beforeAll } from 'vitest';
import { startTestBuilder, type TestBuilder } from './harness.js';

/**
 * The test file's builder stack: registers a `beforeAll` that starts it with `args` ({@link startTestBuilder})
 * and an `afterAll` that closes it, and returns a handle whose fields read the running stack (they
 * throw outside hooks and tests, before it started). Hooks registered after this call see it started.
 */
export function useTestBuilder(...args: Parameters<typeof startTestBuilder>): Omit<TestBuilder, 'close'> {
  let started: TestBuilder | undefined;
  beforeAll(async () => {
    started = await startTestBuilder(...args);
  });
  afterAll(async () => {
    await started?.close();
  });
  return new Proxy({} as Omit<TestBuilder, 'close'>, {
    get(_, field) {
      if (!started) throw new Error('the test builder starts in beforeAll: read it inside a hook or a test');
      return started[field as keyof TestBuilder];
    },
  });
}
