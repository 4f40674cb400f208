import { decodeTime, isValid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { newExecutionId } from '../src/index.js';

describe('newExecutionId', () => {
  it('is exe_ + a valid ULID of the current time, never the same twice, its random part spread over the alphabet', () => {
    const before = Date.now();
    const ids = Array.from({ length: 3_000 }, () => newExecutionId());
    const after = Date.now();
    expect(new Set(ids).size).toBe(ids.length);
    const seen = new Set<string>();
    for (const id of ids) {
      expect(id).toMatch(/^exe_[0-9A-HJKMNP-TV-Z]{26}$/);
      const u = id.slice(4);
      expect(isValid(u)).toBe(true);
      expect(decodeTime(u)).toBeGreaterThanOrEqual(before);
      expect(decodeTime(u)).toBeLessThanOrEqual(after);
      for (const c of u.slice(10)) seen.add(c);
    }
    // 3,000 ids x 16 random characters: every one of the 32 Crockford characters appears
    expect(seen.size).toBe(32);
  });
});
