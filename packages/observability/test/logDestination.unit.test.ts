import { spawnSync } from 'node:child_process';
import fs, { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ASYNC_LOG_BATCH, asyncLogDestination, createLogger } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'acg-logdest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

describe('asyncLogDestination (the service loggers’ output)', () => {
  it('batches: 200 lines logged one per event-loop turn (as requests come) go out in a few writes, in order, with no explicit flush', async () => {
    const file = join(dir, 'batched.log');
    const dest = asyncLogDestination(file);
    const log = pino({ base: { service: 't' } }, dest);
    await new Promise<void>((resolve) => dest.once('ready', () => resolve()));
    const fd = (dest as unknown as { fd: number }).fd;
    const write = vi.spyOn(fs, 'write');
    try {
      for (let i = 0; i < 200; i++) {
        log.info({ i }, 'request');
        await new Promise((r) => setImmediate(r));
      }
      // the periodic flush writes the rest without anyone calling flush()
      await until(() => readFileSync(file, 'utf8').split('\n').filter(Boolean).length === 200);
      const writes = write.mock.calls.filter((c) => c[0] === fd).length;
      // ~60 bytes a line: 200 lines are ~3 batches of 4 KiB plus the timer's; unbatched it is one write a line
      expect(writes).toBeGreaterThan(0);
      expect(writes).toBeLessThan(20);
    } finally {
      write.mockRestore();
    }
    expect(lines(file).map((l) => l.i)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    dest.end();
  });

  it('a full batch is written at once, in order, without waiting for the timer', async () => {
    const file = join(dir, 'full.log');
    const dest = asyncLogDestination(file);
    const log = pino({}, dest);
    await new Promise<void>((resolve) => dest.once('ready', () => resolve()));
    const n = Math.ceil(ASYNC_LOG_BATCH.minLength / 50) + 10;
    for (let i = 0; i < n; i++) log.info({ i, pad: 'x'.repeat(20) }, 'request');
    await until(() => readFileSync(file, 'utf8').split('\n').filter(Boolean).length === n);
    expect(lines(file).map((l) => l.i)).toEqual(Array.from({ length: n }, (_, i) => i));
    dest.end();
  });

  it('a crash loses no buffered line: createLogger’s stdout batch is written when the process exits on an uncaught exception', () => {
    const script = join(dir, 'crash.ts');
    const logger = fileURLToPath(new URL('../src/logger.ts', import.meta.url));
    writeFileSync(
      script,
      `import { createLogger } from ${JSON.stringify(logger)};
const log = createLogger({ service: 'crash' });
setTimeout(() => { log.info('before the crash'); throw new Error('boom'); }, 50);
`,
    );
    const out = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8' });
    expect(out.status).not.toBe(0);
    expect(out.stderr).toContain('boom');
    const got = out.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(got.map((l) => [l.service, l.msg])).toEqual([['crash', 'before the crash']]);
  });

  it('createLogger given a destination (tests) writes each line there at once; only the default stdout is batched', () => {
    const got: string[] = [];
    const log = createLogger({ service: 'x', destination: { write: (s: string) => void got.push(s) } });
    log.info('hello');
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0])).toMatchObject({ service: 'x', msg: 'hello' });
  });
});
