import { describe, expect, it } from 'vitest';
import { compileJsonSchema, MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, ProviderError } from '../src/index.js';

// Bounds on provider JSON Schemas and the RE2 engine of their patterns (issue 23 item 4).
const refusal = (f: () => unknown): ProviderError => {
  try {
    f();
  } catch (e) {
    if (e instanceof ProviderError) return e;
    throw e;
  }
  throw new Error('expected a ProviderError');
};

describe('compileJsonSchema', () => {
  it('matches a catastrophic-backtracking pattern with RE2: the answer is right and comes back', () => {
    const validate = compileJsonSchema({ type: 'string', pattern: '^(a|a)*$' }, 'input_schema');
    expect(validate(`${'a'.repeat(10_000)}b`)).toBe(false);
    expect(validate('a'.repeat(10_000))).toBe(true);
    const props = compileJsonSchema({ type: 'object', patternProperties: { '^(x|x)*$': { type: 'number' } } }, 'input_schema');
    expect(props({ [`${'x'.repeat(10_000)}y`]: 'free' })).toBe(true);
    expect(props({ ['x'.repeat(40)]: 'not a number' })).toBe(false);
  });

  it('refuses a pattern RE2 cannot run (lookaround, backreference) as invalid_schema 400', () => {
    for (const pattern of ['(?=a)b', '(a)\\1']) {
      const e = refusal(() => compileJsonSchema({ type: 'string', pattern }, 'input_schema'));
      expect(e).toMatchObject({ code: 'invalid_schema', status: 400 });
    }
  });

  it('refuses a schema over the size limit (413 schema_too_large) and over the depth limit (422 schema_too_deep)', () => {
    const big = refusal(() => compileJsonSchema({ enum: ['x'.repeat(MAX_SCHEMA_BYTES)] }, 'input_schema'));
    expect(big).toMatchObject({ code: 'schema_too_large', status: 413, extra: { limit: 'schema_too_large' } });
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < MAX_SCHEMA_DEPTH + 1; i++) deep = { type: 'array', items: deep };
    const nested = refusal(() => compileJsonSchema(deep, 'output_schema'));
    expect(nested).toMatchObject({ code: 'schema_too_deep', status: 422 });
    expect(nested.message).toContain('output_schema');
  });
});
