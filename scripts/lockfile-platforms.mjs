#!/usr/bin/env node
/**
 * Completes package-lock.json with the other platforms' optional binary packages.
 *
 * Why: `npm install` writes every optional platform package (rollup, anvil, msgpackr-extract
 * ship one per OS/CPU) into the lockfile only when it can read each one's manifest from the
 * registry. A registry mirror that holds only this machine's platform builds makes npm leave
 * them out, and `npm ci` then refuses the lockfile ("Missing: @rollup/rollup-darwin-arm64@ from
 * lock file"). This script adds one entry per missing optional dependency, marked `optional`
 * with the `os`/`cpu`/`libc` read from the package name, so `npm ci` skips it on other
 * platforms exactly as it would with a full lockfile.
 *
 * Usage: `npm run lockfile` (runs `npm install --package-lock-only`, then this script).
 * `node scripts/lockfile-platforms.mjs --check` exits 1 when entries are missing (no write).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const lockPath = join(dirname(fileURLToPath(import.meta.url)), '..', 'package-lock.json');
const check = process.argv.includes('--check');
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

const OS = { darwin: 'darwin', linux: 'linux', win32: 'win32', freebsd: 'freebsd', openbsd: 'openbsd', android: 'android', openharmony: 'openharmony' };
const CPU = { amd64: 'x64', x64: 'x64', arm64: 'arm64', arm: 'arm', ia32: 'ia32', loong64: 'loong64', ppc64: 'ppc64', riscv64: 'riscv64', s390x: 's390x' };

/** Platform constraints from a name such as `rollup-linux-arm64-musl` or `anvil-win32-amd64`. */
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const out = {};
  for (const p of parts) {
    if (OS[p] && !out.os) out.os = [OS[p]];
    else if (CPU[p] && !out.cpu) out.cpu = [CPU[p]];
    else if (p === 'musl' || p === 'gnu' || p === 'gnueabihf' || p === 'musleabihf') out.libc = [p.startsWith('musl') ? 'musl' : 'glibc'];
    else if (p === 'eabi' && out.os?.[0] === 'android') out.cpu ??= ['arm'];
  }
  if (!out.os || !out.cpu) throw new Error(`cannot tell the platform of ${name}`);
  if (out.os[0] !== 'linux') delete out.libc;
  return out;
}

/** The lockfile location a `require(name)` from `from` resolves to, or undefined. */
function resolve(from, name) {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return undefined;
    const i = base.lastIndexOf('node_modules/');
    base = i <= 0 ? '' : base.slice(0, i - 1);
  }
}

const added = [];
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    if (resolve(location, name)) continue;
    if (!/^\d+\.\d+\.\d+/.test(version)) throw new Error(`${location}: optional ${name}@${version} is not an exact version`);
    const at = packages[`node_modules/${name}`] ? `${location}/node_modules/${name}` : `node_modules/${name}`;
    packages[at] = { version, dev: entry.dev, optional: true, ...platformOf(name) };
    if (!packages[at].dev) delete packages[at].dev;
    added.push(`${at}@${version}`);
  }
}

if (check) {
  if (added.length) {
    console.error(`package-lock.json lacks ${added.length} optional platform packages; run: npm run lockfile`);
    process.exit(1);
  }
  console.log('package-lock.json: every optional platform package is recorded');
} else {
  lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)));
  writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(added.length ? `added ${added.length} optional platform entries:\n  ${added.join('\n  ')}` : 'nothing to add');
}
