import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WIRE_TYPES_FILE, generateWireTypes } from '../scripts/wire-types.js';

// The SDK's wire types are the zod schemas' inferred types, expanded into src/wire/types.generated.ts
// so the published .d.ts is self-contained. This fails when a schema changed and the file was not
// regenerated (`npx tsx packages/sdk/scripts/wire-types.ts`).
describe('src/wire/types.generated.ts', () => {
  it('matches what the schemas of @acg/schemas generate', () => {
    expect(readFileSync(WIRE_TYPES_FILE, 'utf8')).toBe(generateWireTypes());
  }, 120_000);

  it('has no import (self-contained: no zod, no @acg/schemas)', () => {
    expect(readFileSync(WIRE_TYPES_FILE, 'utf8')).not.toMatch(/^\s*import\b|\bfrom\s+['"]|import\(/m);
  });
});
