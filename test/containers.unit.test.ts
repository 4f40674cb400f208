/**
 * The container files (docs/operating.md > Containers). Docker is not on these machines, so the
 * structure is checked instead: a multi-stage Dockerfile on node:20-slim whose runtime stage runs
 * as a non-root user with dist/ and production modules only; a compose.yaml with Redis (AOF on),
 * two gateways, a worker and a builder, each with a healthcheck, every environment variable
 * documented in docs/configuration.md (`ENV_REFERENCE` of @acg/env, which generates it), and every command an entry point tsup builds.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ENV_REFERENCE } from '@acg/env';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
}

describe('Dockerfile', () => {
  const lines = read('Dockerfile')
    .split('\n')
    .filter((l) => l.trim() && !l.trim().startsWith('#'));
  const stages = lines.filter((l) => /^FROM /.test(l));
  const runtime = lines.slice(lines.lastIndexOf(stages.at(-1)!));

  it('is multi-stage on node:20-slim', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const s of stages) expect(s).toMatch(/^FROM node:20-slim\b/);
  });

  it('runs as the non-root node user with dist/ and production modules only', () => {
    expect(runtime.some((l) => /^USER node$/.test(l.trim()))).toBe(true);
    const copies = runtime.filter((l) => /^COPY /.test(l));
    expect(copies.every((l) => /--from=build/.test(l))).toBe(true);
    expect(copies.map((l) => l.split(/\s+/).at(-1))).toEqual(expect.arrayContaining(['./dist', './node_modules']));
    expect(runtime.join('\n')).not.toMatch(/COPY (--[^ ]+ )*\.\s/); // never the whole source tree
    expect(lines.join('\n')).toMatch(/npm prune --omit=dev/);
  });
});

describe('compose.yaml', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
  const services = compose.services;
  const documented = new Set(ENV_REFERENCE.flatMap((e) => e.names));
  const entries = [...read('tsup.config.ts').matchAll(/^\s+'?([a-z-]+)'?: 'apps\/[a-z-]+\/src\/main\.ts'/gm)].map((m) => `dist/${m[1]}.js`);

  it('runs Redis with AOF, two gateways, a worker and a builder', () => {
    expect(Object.keys(services).sort()).toEqual(['builder', 'gateway-1', 'gateway-2', 'redis', 'worker']);
    expect(services.redis.command).toEqual(expect.arrayContaining(['--appendonly', 'yes']));
    // the gateway refuses a store that can lose acknowledged writes (docs/durability.md)
    expect(services.redis.command?.join(' ')).toContain('--appendfsync always');
    expect(services['gateway-1'].command).toEqual(['node', 'dist/gateway.js']);
    expect(services['gateway-2'].command).toEqual(['node', 'dist/gateway.js']);
    expect(services.worker.command).toEqual(['node', 'dist/worker.js']);
    expect(services.builder.command).toEqual(['node', 'dist/builder.js']);
  });

  it('gives every service a healthcheck', () => {
    for (const [name, s] of Object.entries(services)) expect(s.healthcheck?.test?.length, name).toBeGreaterThan(0);
  });

  it('runs only entry points the build produces', () => {
    for (const [name, s] of Object.entries(services)) {
      if (name === 'redis') continue;
      expect(entries, name).toContain(s.command![1]);
    }
  });

  it('uses only environment variables documented in docs/configuration.md', () => {
    expect(documented.size).toBeGreaterThan(20);
    for (const [name, s] of Object.entries(services)) {
      for (const key of Object.keys(s.environment ?? {})) expect(documented.has(key), `${name}: ${key}`).toBe(true);
    }
  });
});
