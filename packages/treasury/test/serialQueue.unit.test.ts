import { describe, expect, it } from 'vitest';
import { SerialQueue } from '../src/serialQueue.js';

describe('SerialQueue (chain sender sends)', () => {
  it('runs steps one at a time in call order, and a failure does not stop the next', async () => {
    const q = new SerialQueue();
    const log: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const step =
      (name: string, fail = false) =>
      async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        log.push(`start ${name}`);
        await new Promise((r) => setTimeout(r, 5));
        log.push(`end ${name}`);
        running--;
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([q.run(step('a')), q.run(step('b', true)), q.run(step('c'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(maxRunning).toBe(1);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });
});
