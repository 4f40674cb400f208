/**
 * Regenerates src/artifacts.generated.ts by compiling contracts/*.sol with solc-js (see README.md "Build").
 * Run: npx tsx packages/x402-contracts/scripts/build-contracts.ts
 * test/artifacts.unit.test.ts compiles again and fails if the checked-in file differs.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { artifactsSource, compileX402Contracts } from './compile.js';

const out = fileURLToPath(new URL('../src/artifacts.generated.ts', import.meta.url));
writeFileSync(out, artifactsSource(compileX402Contracts()));
console.log(`wrote ${out}`);
