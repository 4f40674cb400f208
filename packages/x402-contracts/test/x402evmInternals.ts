// Values @x402/evm 2.27 uses internally without exporting them from its entry points (the batch settlement
// ABI, the Permit2 deposit collector's address, the deposit witness types): read from its ESM build, from the
// chunk that declares them, so the tests compare ours with exactly what its client and facilitator use.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The exports of the `@x402/evm` ESM chunk whose source contains `var <declaration> =`.
 *
 * @throws {Error} If no chunk declares it.
 */
export async function x402EvmChunkDeclaring(declaration: string): Promise<Record<string, unknown>> {
  // The package's main entry is dist/cjs/index.js (its exports map hides package.json): dist/esm sits beside dist/cjs.
  const dist = path.join(path.dirname(createRequire(import.meta.url).resolve('@x402/evm')), '..', 'esm');
  for (const f of readdirSync(dist)
    .filter((n) => n.endsWith('.mjs'))
    .sort()) {
    if (!readFileSync(path.join(dist, f), 'utf8').includes(`var ${declaration} =`)) continue;
    return (await import(pathToFileURL(path.join(dist, f)).href)) as Record<string, unknown>;
  }
  throw new Error(`${declaration} not found in @x402/evm`);
}
