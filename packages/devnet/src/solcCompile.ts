import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The solc-js compile helper shared by the Permit2 build (`permit2/compile.ts`) and the lending dev
 * contracts (`lending/compile.ts`): gathering the sources, the on-disk cache and the solc checks.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

/** solc-js as its npm packages (`solc`, `solc-0.8.17`) export it. */
export type SolcJs = { version(): string; compile(input: string): string };

/** solc standard-JSON output: its messages, and per source unit and contract name what `outputSelection` asked for (`C`). */
export type SolcOutput<C> = {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<string, Record<string, C>>;
};

/** Resolves `spec` (e.g. `pkg/package.json`) from this module, or, when bundled into dist/, from the @acg/devnet package; throws if neither has it. */
export function resolveDevnetDep(spec: string): string {
  try {
    return require.resolve(spec);
  } catch {
    return createRequire(require.resolve('@acg/devnet/package.json')).resolve(spec);
  }
}

/** Requires a dependency of @acg/devnet from this module, or, when bundled into dist/, from the @acg/devnet package. */
export function requireDevnetDep<T>(name: string): T {
  try {
    return require(name) as T;
  } catch {
    return createRequire(require.resolve('@acg/devnet/package.json'))(name) as T;
  }
}

/**
 * The standard-JSON `sources` of `entries` and everything they import, transitively (`import "x"` and
 * `import {..} from "x"`; a relative `x` is resolved against the importing unit), sorted by unit name,
 * so that a cache key over the input covers every byte compiled. `readUnit` maps a unit name to its
 * Solidity text and throws for an unknown one.
 */
export function gatherSources(entries: readonly string[], readUnit: (unit: string) => string): Record<string, { content: string }> {
  const sources: Record<string, { content: string }> = {};
  const pending = [...entries];
  while (pending.length > 0) {
    const unit = pending.pop()!;
    if (sources[unit]) continue;
    const content = readUnit(unit);
    sources[unit] = { content };
    for (const m of content.matchAll(/import\s+(?:[^'"]*from\s+)?["']([^"']+)["']/g)) {
      const spec = m[1];
      const resolved = spec.startsWith('.') ? path.posix.normalize(path.posix.join(path.posix.dirname(unit), spec)) : spec;
      if (!sources[resolved]) pending.push(resolved);
    }
  }
  return Object.fromEntries(Object.entries(sources).sort(([a], [b]) => a.localeCompare(b)));
}

/** The cache folder `node_modules/.cache/<name>` at the repository root (found from this file). */
function cacheDir(name: string): string {
  let dir = here;
  for (let i = 0; i < 8; i++) {
    if (existsSync(path.join(dir, 'node_modules'))) return path.join(dir, 'node_modules', '.cache', name);
    dir = path.dirname(dir);
  }
  return path.join(here, '.cache', name);
}

/**
 * Compiles the standard-JSON `input` with solc-js `version` and returns `extract(output)`, cached on
 * disk as JSON under `node_modules/.cache/<cacheName>/<sha256 of version and input>.json` (written
 * atomically: concurrent test files never read a half-written file). On a hit solc is not loaded
 * (`loadSolc` runs only on a miss: soljson.js is large).
 *
 * @throws {Error} `<label>: need solc <version>, found <v>` if `loadSolc` gives another version,
 *   `<label>: solc errors:` and solc's messages if it reports an error, or what `extract` throws.
 */
export function compileCached<T, C>(opts: {
  label: string;
  version: string;
  cacheName: string;
  input: unknown;
  loadSolc: () => SolcJs;
  extract: (output: SolcOutput<C>) => T;
}): T {
  const inputJson = JSON.stringify(opts.input);
  const key = createHash('sha256').update(`${opts.version}\n${inputJson}`).digest('hex');
  const dir = cacheDir(opts.cacheName);
  const file = path.join(dir, `${key}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as T;
  const solc = opts.loadSolc();
  if (!solc.version().startsWith(`${opts.version}+`)) throw new Error(`${opts.label}: need solc ${opts.version}, found ${solc.version()}`);
  const output = JSON.parse(solc.compile(inputJson)) as SolcOutput<C>;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`${opts.label}: solc errors:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  const result = opts.extract(output);
  mkdirSync(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(result));
  renameSync(tmp, file);
  return result;
}
