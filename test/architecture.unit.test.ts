/**
 * The workspace's shape (docs/decisions.md "Capabilities: one definition": apps are composition roots; they
 * wire packages together and import no other app):
 *
 * - a file under `apps/<app>/src` imports no other app, neither by package name nor by a relative
 *   path leaving its app. The single exception is the `npm start` launcher
 *   (`apps/launcher/src/start.ts`): the process model of docs/architecture.md "Shape" runs the gateway, the builder and the
 *   worker in one Node process, so it is the one composition root of the other apps;
 * - a file under `packages/<pkg>/src` imports no app and stays inside its package;
 * - every workspace declares the `@acg/*` packages it imports (`dependencies` for `src`,
 *   `dependencies` or `devDependencies` for `test` and for a type-only import in `src`, which
 *   the build erases: the published SDK expands the wire types of `@acg/schemas`; and for a
 *   `devDependencies` module the SDK's build bundles, its tsup `noExternal`, such as the MCP
 *   tool-name mapping `@acg/schemas/mcpToolName`);
 * - the workspace graph of `dependencies` has no cycle, and no package lists an app in its
 *   `dependencies` (a package's tests may start an app: `devDependencies`).
 *
 * Imports are read with the TypeScript scanner (`ts.preProcessFile`: static imports, re-exports,
 * dynamic `import()`), so code in comments does not count.
 *
 * Import circles (docs/architecture.md "Packages by role"): dependency-cruiser, with the rules of
 * `.dependency-cruiser.cjs`, finds no circle among the modules of apps, packages, tests and bench
 * (type-only imports included), and no file of `packages/<name>/src` importing an app.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sdkBuild } from '../packages/sdk/tsup.config.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Files under apps/ allowed to import other apps, and why (keep this list at one entry). */
const APP_IMPORT_EXCEPTIONS: Record<string, string> = {
  'apps/launcher/src/start.ts': 'the `npm start` launcher runs gateway, builder and worker in one process (docs/architecture.md "Shape")',
};

interface Workspace {
  dir: string;
  name: string;
  kind: 'app' | 'package';
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

function workspaces(): Workspace[] {
  const out: Workspace[] = [];
  for (const kind of ['apps', 'packages'] as const) {
    for (const entry of readdirSync(path.join(ROOT, kind)).sort()) {
      const pj = path.join(ROOT, kind, entry, 'package.json');
      let raw: string;
      try {
        raw = readFileSync(pj, 'utf8');
      } catch {
        continue;
      }
      const json = JSON.parse(raw) as { name: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
      out.push({
        dir: `${kind}/${entry}`,
        name: json.name,
        kind: kind === 'apps' ? 'app' : 'package',
        dependencies: json.dependencies ?? {},
        devDependencies: json.devDependencies ?? {},
      });
    }
  }
  return out;
}

/** Files under `dir` (node_modules and dist skipped) whose name `keep` accepts, recursively. */
function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  let names: string[];
  try {
    names = readdirSync(path.join(ROOT, dir));
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    if (n === 'node_modules' || n === 'dist') return [];
    const rel = `${dir}/${n}`;
    if (statSync(path.join(ROOT, rel)).isDirectory()) return filesUnder(rel, keep);
    return keep(n) ? [rel] : [];
  });
}

/** TypeScript sources under `dir` (no declaration files). */
const tsFiles = (dir: string) => filesUnder(dir, (n) => /\.(c|m)?tsx?$/.test(n) && !n.endsWith('.d.ts'));

const importsCache = new Map<string, string[]>();
/** Every module specifier a file imports (static, re-export, dynamic); read once per file. */
function importsOf(file: string): string[] {
  let out = importsCache.get(file);
  if (!out) {
    const info = ts.preProcessFile(readFileSync(path.join(ROOT, file), 'utf8'), true, true);
    out = info.importedFiles.map((f) => f.fileName);
    importsCache.set(file, out);
  }
  return out;
}

/** Module specifiers a file imports for types only (`import type ... from`, `export type ... from`): erased at build time. */
function typeOnlyImportsOf(file: string): Set<string> {
  const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest);
  const out = new Set<string>();
  for (const st of source.statements) {
    if (ts.isImportDeclaration(st) && st.importClause?.isTypeOnly && ts.isStringLiteral(st.moduleSpecifier)) out.add(st.moduleSpecifier.text);
    if (ts.isExportDeclaration(st) && st.isTypeOnly && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)) out.add(st.moduleSpecifier.text);
  }
  return out;
}

/** `@acg/x/sub` → `@acg/x`; anything not `@acg/*` → undefined. */
const workspaceName = (spec: string) => (spec.startsWith('@acg/') ? spec.split('/').slice(0, 2).join('/') : undefined);

/** Module specifiers a workspace's build bundles (so a devDependency suffices): the published SDK's tsup `noExternal`. */
const BUNDLED: Record<string, readonly (string | RegExp)[]> = { 'packages/sdk': sdkBuild.noExternal ?? [] };
const bundled = (dir: string, spec: string) => (BUNDLED[dir] ?? []).some((p) => (typeof p === 'string' ? p === spec : p.test(spec)));

const WS = workspaces();
const APP_NAMES = new Set(WS.filter((w) => w.kind === 'app').map((w) => w.name));

describe('apps are composition roots', () => {
  it('finds the workspaces and their sources (the scan is not vacuous)', () => {
    expect([...APP_NAMES].sort()).toEqual(expect.arrayContaining(['@acg/builder', '@acg/gateway', '@acg/worker']));
    expect(WS.find((w) => w.name === '@acg/devnet')?.kind).toBe('package');
    expect(tsFiles('apps/worker/src').length).toBeGreaterThan(0);
    expect(importsOf('apps/launcher/src/start.ts')).toEqual(expect.arrayContaining(['@acg/gateway', '@acg/builder', '@acg/worker']));
  });

  it('no file under apps/*/src imports another app (apps/launcher/src/start.ts, the launcher, excepted)', () => {
    const offences: string[] = [];
    for (const app of WS.filter((w) => w.kind === 'app')) {
      for (const file of tsFiles(`${app.dir}/src`)) {
        if (APP_IMPORT_EXCEPTIONS[file]) continue;
        for (const spec of importsOf(file)) {
          const name = workspaceName(spec);
          if (name && APP_NAMES.has(name) && name !== app.name) offences.push(`${file}: imports ${spec}`);
          if (spec.startsWith('.')) {
            const target = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), spec));
            if (!target.startsWith(`${app.dir}/`)) offences.push(`${file}: imports ${spec} (outside ${app.dir})`);
          }
        }
      }
    }
    expect(offences).toEqual([]);
  });

  it('keeps the exception list at the launcher alone', () => {
    expect(Object.keys(APP_IMPORT_EXCEPTIONS)).toEqual(['apps/launcher/src/start.ts']);
  });

  it('no file under packages/*/src imports an app or reaches outside its package', () => {
    const offences: string[] = [];
    for (const pkg of WS.filter((w) => w.kind === 'package')) {
      for (const file of tsFiles(`${pkg.dir}/src`)) {
        for (const spec of importsOf(file)) {
          const name = workspaceName(spec);
          if (name && APP_NAMES.has(name)) offences.push(`${file}: imports ${spec}`);
          if (spec.startsWith('.')) {
            const target = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), spec));
            if (!target.startsWith(`${pkg.dir}/`)) offences.push(`${file}: imports ${spec} (outside ${pkg.dir})`);
          }
        }
      }
    }
    expect(offences).toEqual([]);
  });
});

describe('workspace dependencies', () => {
  it('every workspace declares the @acg/* packages it imports', () => {
    const missing: string[] = [];
    for (const w of WS) {
      const declared = new Set(Object.keys(w.dependencies));
      const declaredForTests = new Set([...declared, ...Object.keys(w.devDependencies)]);
      for (const [folder, allowed, field] of [
        ['src', declared, 'dependencies'],
        ['test', declaredForTests, 'dependencies or devDependencies'],
      ] as const) {
        for (const file of tsFiles(`${w.dir}/${folder}`)) {
          const typeOnly = typeOnlyImportsOf(file);
          for (const spec of importsOf(file)) {
            const name = workspaceName(spec);
            if (name && (typeOnly.has(spec) || bundled(w.dir, spec)) && declaredForTests.has(name)) continue;
            if (name && name !== w.name && !allowed.has(name)) missing.push(`${w.dir}/package.json: ${name} (imported by ${file}) missing from ${field}`);
          }
        }
      }
    }
    expect([...new Set(missing)]).toEqual([]);
  });

  it('no package lists an app in its dependencies, and no app lists another app (the launcher excepted)', () => {
    const launcher = WS.find((w) => w.dir === 'apps/launcher');
    const offences = WS.flatMap((w) =>
      Object.keys(w.dependencies)
        .filter((d) => APP_NAMES.has(d) && w !== launcher)
        .map((d) => `${w.dir} (${w.kind}) depends on the app ${d}`),
    );
    expect(offences).toEqual([]);
  });

  it('the graph of dependencies between workspaces has no cycle', () => {
    const byName = new Map(WS.map((w) => [w.name, w]));
    const edges = (w: Workspace) => Object.keys(w.dependencies).filter((d) => byName.has(d));
    const state = new Map<string, 'visiting' | 'done'>();
    const cycles: string[] = [];
    const visit = (name: string, trail: string[]) => {
      if (state.get(name) === 'done') return;
      if (state.get(name) === 'visiting') {
        cycles.push([...trail.slice(trail.indexOf(name)), name].join(' → '));
        return;
      }
      state.set(name, 'visiting');
      for (const d of edges(byName.get(name)!)) visit(d, [...trail, name]);
      state.set(name, 'done');
    };
    for (const w of WS) visit(w.name, []);
    expect(cycles).toEqual([]);
  });
});

/** Folders never scanned for citations: dependencies, build output, local state. */
const UNSCANNED = new Set(['node_modules', 'dist', '.git', 'coverage', '.devnet', 'scratch', '__pycache__', 'build', 'screenshots']);
/** Files whose text a reader opens: code, tests, docs, scripts and configuration. */
const TEXT_FILE = /\.(c|m)?(t|j)sx?$|\.(md|py|lua|json|ya?ml|sh|css|html|txt|toml)$|^Dockerfile$/;

function textFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((n) => {
    if (UNSCANNED.has(n) || n === 'package-lock.json') return [];
    const rel = dir === '.' ? n : `${dir}/${n}`;
    if (statSync(path.join(ROOT, rel)).isDirectory()) return textFiles(rel);
    return TEXT_FILE.test(n) ? [rel] : [];
  });
}

/**
 * A citation of a document that lives outside the repository: the service specification, the
 * design notes and the style notes the project started from (`SPEC.md`, `DESIGN.md`, `STYLE.md`,
 * `../shared/`), by file name or by their short names. The repository's own pages replace them
 * (docs/spec-notes.md, docs/decisions.md, docs/pitfalls.md, docs/code-style.md).
 */
const OUTSIDE_DOCUMENT = /\b(?:DESIGN|SPEC|STYLE)\.md\b|\.\.\/shared\b|\b(?:DESIGN|STYLE)\b|\bSPEC\b(?!_)/;

describe('docs live in the repository', () => {
  /** This file states the rule, so it names what it forbids. */
  const files = textFiles('.').filter((f) => f !== 'test/architecture.unit.test.ts');

  it('scans the sources, tests and docs (the scan is not vacuous)', () => {
    expect(files).toEqual(
      expect.arrayContaining(['README.md', 'docs/decisions.md', 'apps/builder/src/commands/lua/token_bucket.lua', 'apps/gateway/src/app.ts']),
    );
  });

  it('the rule catches each way a document outside the repository was cited', () => {
    for (const cited of ['(DESIGN "Providers")', 'SPEC 2.9', 'see SPEC.md', 'STYLE.md', '`../shared/DESIGN.md`', "DESIGN's schedule"]) {
      expect(OUTSIDE_DOCUMENT.test(cited), cited).toBe(true);
    }
    for (const fine of ['docs/decisions.md "Providers"', 'docs/spec-notes.md 2.9', 'SPEC_P50_MS', 'the spec paths']) {
      expect(OUTSIDE_DOCUMENT.test(fine), fine).toBe(false);
    }
  });

  it('no source, test or doc file refers to a document outside the repository', () => {
    const offenders = files.flatMap((file) =>
      readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (OUTSIDE_DOCUMENT.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(offenders).toEqual([]);
  });
});

/** Every string literal of a file (`'...'`, `"..."`, and template text without substitutions), read with the TypeScript scanner: code in comments does not count. */
function stringLiteralsOf(file: string): string[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, readFileSync(path.join(ROOT, file), 'utf8'));
  const out: string[] = [];
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (token === ts.SyntaxKind.StringLiteral || token === ts.SyntaxKind.NoSubstitutionTemplateLiteral) out.push(scanner.getTokenValue());
  }
  return out;
}

const SOURCE_FILES = WS.flatMap((w) => tsFiles(`${w.dir}/src`));
/** The built-in capability ids, read from their definitions' files (`id: '<product>.<name>'` or a `*_ID` constant beside it). */
const BUILTIN_DIR = 'packages/capabilities/src/builtin';
const BUILTIN_IDS = tsFiles(BUILTIN_DIR)
  .map((f) => path.basename(f, '.ts'))
  .filter((n) => /^(gateway|builder|mev|intelligence)_/.test(n))
  .map((n) => n.replace('_', '.'));

describe('one implementation per capability (packages/capabilities README)', () => {
  it('finds the built-ins (the scan is not vacuous)', () => {
    expect(BUILTIN_IDS).toEqual(expect.arrayContaining(['mev.liquidation_search', 'intelligence.wallet_balances', 'builder.send_bundle']));
  });

  it('each capability is defined in one file: its id, schemas, examples and run live together', () => {
    const offences: string[] = [];
    for (const id of BUILTIN_IDS) {
      const own = `${BUILTIN_DIR}/${id.replace('.', '_')}.ts`;
      expect(stringLiteralsOf(own), own).toContain(id);
      // the id is declared (`id: '...'` or an `_ID = '...'` constant) in its definition's file only
      const declaration = new RegExp(`(\\bid:\\s*|_ID\\s*=\\s*)'${id.replace('.', '\\.')}'`);
      for (const file of SOURCE_FILES) {
        // the published SDK is a client of the gateway: it names the capabilities it calls (it cannot import the gateway's packages)
        if (file.startsWith('packages/sdk/')) continue;
        if (file !== own && declaration.test(readFileSync(path.join(ROOT, file), 'utf8')))
          offences.push(`${file}: declares ${id} again (its one definition is ${own})`);
      }
    }
    expect(offences).toEqual([]);
  });

  it('no app writes a built-in capability id: apps name a capability by its definition (e.g. `liquidationSearch.id`)', () => {
    // the catalog page shows a copy-paste SDK snippet, as text
    const allowed = new Set(['apps/gateway/src/web/pages/catalog.ts']);
    const offences = SOURCE_FILES.filter((f) => f.startsWith('apps/') && !allowed.has(f)).flatMap((file) =>
      stringLiteralsOf(file)
        .filter((s) => BUILTIN_IDS.includes(s))
        .map((s) => `${file}: writes the id ${s}`),
    );
    expect(offences).toEqual([]);
  });

  it("no app re-implements a capability: no app writes a built-in's REST path (its route binds the definition: capabilityRoute)", () => {
    const paths = tsFiles(BUILTIN_DIR)
      .flatMap((f) => stringLiteralsOf(f))
      .filter((s) => s.startsWith('{base_url}/v1/'))
      .map((s) => s.slice('{base_url}'.length));
    expect(paths).toEqual(expect.arrayContaining(['/v1/liquidation-search', '/v1/liquidation-plans']));
    const bound = ['/v1/liquidation-search', '/v1/liquidation-plans'];
    const offences = SOURCE_FILES.filter((f) => f.startsWith('apps/')).flatMap((file) =>
      stringLiteralsOf(file)
        .filter((s) => bound.some((p) => s === p || s.startsWith(`${p}?`)))
        .map((s) => `${file}: writes the path ${s} of a capability`),
    );
    expect(offences).toEqual([]);
  });
});

/** Each domain's key fragment (after the deployment prefix) and the workspaces allowed to name it (its `src/commands/keys.ts` names it for everyone else). */
const DOMAIN_KEYS: Record<string, string[]> = {
  // the paywall's reservations (`pay:auth:`, `pay:inflight`), the treasury's finality tracking (`pay:fin:`), recovery and reconciliation's locks and report
  'pay:': ['packages/payments', 'packages/treasury', 'packages/reconciliation'],
  'idem:': ['packages/payments'],
  'refund:': ['packages/treasury'],
  'payid:': ['packages/payments'],
  'treasury-send:': ['packages/treasury'],
  'acct:': ['packages/accounts'],
  'auth:': ['packages/identity'],
  // each app's own per-IP rate limit (the builder's token bucket; the gateway's rate-limiter-flexible)
  'rl:': ['apps/builder', 'apps/gateway'],
  'builder:': ['packages/bundles'],
  'wm:': ['packages/wallet-monitor'],
  'liq:': ['packages/liquidations'],
  'pl:': ['packages/provider-ledger'],
  // x402 batch-settlement channels, the channel manager's lease
  'ch:': ['packages/channels'],
};
/** The common Lua scripts @acg/redis keeps; every other script lives in its domain's `src/commands/lua`. */
const COMMON_LUA = ['hdel_if_equal.lua', 'rate_limit_incr.lua', 'release_lease.lua', 'set_unlogged.lua', 'take_lease.lua'];

/** Lua scripts under `dir`. */
const luaFiles = (dir: string) => filesUnder(dir, (n) => n.endsWith('.lua'));

describe('persistence beside its domain (packages/redis README)', () => {
  it("every Lua script is in a domain's src/commands/lua, or one of @acg/redis's common scripts", () => {
    const all = WS.flatMap((w) => luaFiles(`${w.dir}/src`));
    expect(all.length).toBeGreaterThan(20);
    const offences = all.filter(
      (f) => !/^(apps|packages)\/[^/]+\/src\/commands\/lua\/[^/]+\.lua$/.test(f) && !COMMON_LUA.some((c) => f === `packages/redis/src/lua/${c}`),
    );
    expect(offences).toEqual([]);
    expect(
      luaFiles('packages/redis/src')
        .map((f) => path.basename(f))
        .sort(),
    ).toEqual(COMMON_LUA);
  });

  it("every domain's key names are built in its own package only (src/commands/keys.ts names them for the others)", () => {
    const offences: string[] = [];
    for (const file of SOURCE_FILES) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      for (const [fragment, owners] of Object.entries(DOMAIN_KEYS)) {
        // a key is built as `${prefix}<fragment>...` (RedisKeys.prefix)
        if (text.includes(`prefix}${fragment}`) && !owners.some((o) => file.startsWith(`${o}/`)))
          offences.push(`${file}: builds a ${fragment} key (owned by ${owners.join(', ')})`);
      }
    }
    expect(offences).toEqual([]);
    for (const owners of Object.values(DOMAIN_KEYS)) expect(readFileSync(path.join(ROOT, owners[0], 'src/commands/keys.ts'), 'utf8')).toContain('keys.prefix}');
  });
});

/** The rules of `.dependency-cruiser.cjs` (the same file `npx depcruise apps packages test bench` reads). */
const DEPCRUISE = createRequire(import.meta.url)('../.dependency-cruiser.cjs') as Required<Pick<IConfiguration, 'forbidden' | 'options'>>;

/** The rule violations dependency-cruiser finds under `dirs` of `baseDir`, one line each (`rule: from → to`, a circle's path), and the modules cruised. */
async function importViolations(baseDir: string, dirs: string[]): Promise<{ cruised: number; violations: string[] }> {
  const { tsConfig, ...options } = DEPCRUISE.options;
  const result = await cruise(dirs, {
    ...options,
    ...(baseDir === ROOT ? { tsConfig } : {}),
    baseDir,
    validate: true,
    ruleSet: { forbidden: DEPCRUISE.forbidden },
  });
  const { summary } = result.output as ICruiseResult;
  return {
    cruised: summary.totalCruised,
    violations: summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' → ')})` : ''}`),
  };
}

describe('no import circles (dependency-cruiser, .dependency-cruiser.cjs)', () => {
  it('no module of apps, packages, tests or bench is in an import circle, and no package source imports an app', async () => {
    const { cruised, violations } = await importViolations(ROOT, ['apps', 'packages', 'test', 'bench']);
    expect(cruised).toBeGreaterThan(500);
    expect(violations).toEqual([]);
  });

  it('the rules catch a circle of type-only imports and a package source importing an app', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'acg-circles-'));
    try {
      const write = (rel: string, text: string) => {
        mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
        writeFileSync(path.join(dir, rel), text);
      };
      write('packages/p/src/a.ts', "import type { B } from './b.js';\nexport interface A { b?: B }\n");
      write('packages/p/src/b.ts', "import type { A } from './a.js';\nexport interface B { a?: A }\n");
      write('packages/p/src/c.ts', "import { d } from '../../../apps/x/src/d.js';\nexport const c = d;\n");
      write('apps/x/src/d.ts', 'export const d = 1;\n');
      const { violations } = await importViolations(dir, ['packages', 'apps']);
      expect(violations).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^no-circular: packages\/p\/src\/a\.ts → packages\/p\/src\/b\.ts/),
          'no-package-imports-app: packages/p/src/c.ts → apps/x/src/d.ts',
        ]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
