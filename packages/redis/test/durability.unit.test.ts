import { describe, expect, it } from 'vitest';
import { classifyDurability } from '../src/index.js';

describe('classifyDurability', () => {
  it('appendonly yes with appendfsync always is durable, with no risk to tell', () => {
    expect(classifyDurability([{ node: 'a:1', appendonly: 'yes', appendfsync: 'always' }])).toEqual({
      verdict: 'durable',
      setting: 'appendonly yes, appendfsync always',
      risk: '',
    });
  });

  it.each([
    [{ appendonly: 'yes', appendfsync: 'everysec' }, 'appendonly yes, appendfsync everysec', /machine crash or power loss loses about the last second/],
    [{ appendonly: 'yes', appendfsync: 'no' }, 'appendonly yes, appendfsync no', /not yet flushed \(up to about 30 s\)/],
    [{ appendonly: 'no', appendfsync: 'always' }, 'appendonly no', /Without an append-only file a Redis restart loses every write/],
  ])('%o can lose acknowledged writes: lossy, and the risk says how', (setting, shown, risk) => {
    const d = classifyDurability([{ node: 'a:1', ...setting }]);
    expect(d.verdict).toBe('lossy');
    expect(d.setting).toBe(shown);
    expect(d.risk).toMatch(risk);
    expect(d.risk).toMatch(/reservation, execution record, provider credit or refund intent/);
  });

  it('a refused CONFIG GET is unknown, not durable', () => {
    const d = classifyDurability([{ node: 'a:1', refused: "ERR unknown command 'CONFIG'" }]);
    expect(d).toMatchObject({ verdict: 'unknown', setting: "CONFIG GET refused (ERR unknown command 'CONFIG')" });
    expect(d.risk).toMatch(/cannot be checked/);
  });

  it('a cluster is as durable as its weakest master, and names each node', () => {
    const always = { appendonly: 'yes', appendfsync: 'always' };
    expect(
      classifyDurability([
        { node: 'a:1', ...always },
        { node: 'b:2', ...always },
      ]).verdict,
    ).toBe('durable');
    const mixed = classifyDurability([
      { node: 'a:1', ...always },
      { node: 'b:2', refused: 'NOPERM' },
      { node: 'c:3', appendonly: 'yes', appendfsync: 'everysec' },
    ]);
    expect(mixed.verdict).toBe('lossy');
    expect(mixed.setting).toBe('a:1: appendonly yes, appendfsync always; b:2: CONFIG GET refused (NOPERM); c:3: appendonly yes, appendfsync everysec');
    expect(mixed.risk).toMatch(/cannot be checked.*machine crash/);
  });
});
