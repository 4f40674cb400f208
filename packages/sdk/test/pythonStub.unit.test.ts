import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The Python stub (sdk-python-stub/) has stdlib unittest tests; run them here so `npm test` covers both clients.
describe('sdk-python-stub', () => {
  it('passes its own unittest suite', () => {
    const cwd = fileURLToPath(new URL('../../../sdk-python-stub/', import.meta.url));
    const r = spawnSync('python3', ['-m', 'unittest', 'discover', '-s', 'tests'], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(r.error, 'python3 must be on PATH').toBeUndefined();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Ran [1-9]\d* tests?[\s\S]*OK/);
  });
});
