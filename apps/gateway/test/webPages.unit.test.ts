import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { STATUS_MEANING, statusMeaning } from '../src/web/pages/capability.js';
import { isInfrastructure } from '../src/web/pages/catalog.js';
import { schemaRows } from '../src/web/pages/schema.js';

describe('capability pages: words that tell the truth', () => {
  it('hides the implementation limits zod writes for an int (±9007199254740991), keeps real bounds', () => {
    const schema = z.toJSONSchema(z.object({ limit: z.number().int().min(1).max(100), block: z.number().int(), any: z.number() })) as Record<string, unknown>;
    const rows = Object.fromEntries(schemaRows(schema).map((r) => [r.path, r.constraints]));
    expect(rows.limit).toEqual(['≥ 1', '≤ 100']);
    expect(rows.block).toEqual([]);
    expect(JSON.stringify(rows)).not.toContain('9007199254740991');
  });

  it('says a LIVE probe that only saw the payment challenge (402) made no paid call', () => {
    expect(statusMeaning('LIVE', 402)).toContain('x402 payment challenge (HTTP 402)');
    expect(statusMeaning('LIVE', 402)).toContain('no paid call was made');
    expect(statusMeaning('LIVE', 402)).not.toContain('the capability itself ran');
    // a built-in whose probe also ran it on the gateway says so
    expect(statusMeaning('LIVE', 402, true)).toContain('the capability itself ran on the gateway with a valid result');
    expect(statusMeaning('LIVE', 402, true)).toContain('no paid call was made');
    expect(statusMeaning('LIVE', 200)).toBe(STATUS_MEANING.LIVE);
    expect(statusMeaning('STALE', 402)).toBe(STATUS_MEANING.STALE);
  });

  it('groups the gateway’s own entries apart from what can be bought', () => {
    expect(isInfrastructure({ product: 'gateway' } as Parameters<typeof isInfrastructure>[0])).toBe(true);
    expect(isInfrastructure({ product: 'intelligence' } as Parameters<typeof isInfrastructure>[0])).toBe(false);
  });
});
