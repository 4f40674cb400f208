import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const moduleUrl = new URL('../src/process.ts', import.meta.url).href;

/** Runs a script in a child node (tsx loader) and returns its exit code and output. */
function run(script: string) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('../../..', import.meta.url)),
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

const log = `const log = { error: (o, m) => console.log('ERROR', m, o.err), fatal: (o, m) => console.log('FATAL', m, o.err) };`;

describe('guardProcess', () => {
  it('logs an unhandled rejection and keeps the process running', () => {
    const r = run(`import { guardProcess } from '${moduleUrl}'; ${log}
      guardProcess(log);
      Promise.reject(new Error('node down'));
      setTimeout(() => { console.log('still' + ' serving'); process.exit(0); }, 200);`);
    expect(r.out).toContain('ERROR unhandled promise rejection');
    expect(r.out).toContain('node down');
    expect(r.out).toContain('still serving');
    expect(r.code).toBe(0);
  });

  it('without the guard, the same rejection ends the process (what the guard prevents)', () => {
    const r = run(`Promise.reject(new Error('node down')); setTimeout(() => { console.log('still' + ' serving'); process.exit(0); }, 200);`);
    expect(r.out).not.toContain('still serving');
    expect(r.code).not.toBe(0);
  });

  it('runs the orderly stop and exits 1 on an uncaught exception', () => {
    const r = run(`import { guardProcess } from '${moduleUrl}'; ${log}
      guardProcess(log, async () => { console.log('stopping in order'); });
      setTimeout(() => { throw new Error('boom'); }, 10);
      setTimeout(() => { console.log('ne' + 'ver'); }, 2000);`);
    expect(r.out).toContain('FATAL uncaught exception');
    expect(r.out).toContain('stopping in order');
    expect(r.out).not.toContain('never');
    expect(r.code).toBe(1);
  });
});
