import { describe, expect, it } from 'vitest';
import { RegistryDocument, registryDocumentJsonSchema } from '../src/index.js';
import { strictAjv } from './ajv.js';
import { validDocument } from './fixtures.js';

const validate = strictAjv().compile(registryDocumentJsonSchema());

/** Ajv and zod must agree on every case: the JSON Schema is generated from the zod schema. */
function verdicts(doc: unknown) {
  return { ajv: validate(doc), zod: RegistryDocument.safeParse(doc).success };
}

type Doc = ReturnType<typeof validDocument>;
function mutated(change: (doc: any) => void): Doc {
  const doc = validDocument();
  change(doc);
  return doc;
}

describe('registry document JSON Schema (docs/spec-notes.md 2.1/2.2)', () => {
  it('is JSON Schema 2020-12 and compiles under strict Ajv2020', () => {
    const schema = registryDocumentJsonSchema();
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(() => strictAjv().compile(schema)).not.toThrow();
  });

  it('accepts a valid document', () => {
    const doc = validDocument();
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(RegistryDocument.safeParse(doc).success).toBe(true);
  });

  const extraAt: Record<string, (doc: any) => void> = {
    'the top level': (d) => (d.extra = 1),
    network: (d) => (d.network.extra = 1),
    'network.domains': (d) => (d.network.domains.extra = 'https://x.example'),
    'a capability': (d) => (d.capabilities[0].extra = 1),
    'a PLANNED capability': (d) => (d.capabilities[2].extra = 1),
    evidence: (d) => (d.capabilities[0].evidence.extra = 1),
    'evidence.probe': (d) => (d.capabilities[0].evidence.probe.extra = 1),
    x402: (d) => (d.capabilities[0].x402.extra = 1),
    'a metric definition': (d) => (d.metric_definitions.availability.extra = 1),
  };
  for (const [where, change] of Object.entries(extraAt)) {
    it(`rejects an extra property at ${where}`, () => {
      expect(verdicts(mutated(change))).toEqual({ ajv: false, zod: false });
    });
  }

  it('rejects LIVE without probe', () => {
    expect(verdicts(mutated((d) => delete d.capabilities[0].evidence.probe))).toEqual({ ajv: false, zod: false });
  });

  it('rejects LIVE without checked_at', () => {
    expect(verdicts(mutated((d) => delete d.capabilities[0].evidence.checked_at))).toEqual({ ajv: false, zod: false });
  });

  it('accepts a PILOT capability without probe (the rule binds LIVE only)', () => {
    const doc = mutated((d) => {
      d.capabilities[0].status = 'PILOT';
      delete d.capabilities[0].evidence.probe;
    });
    expect(verdicts(doc)).toEqual({ ajv: true, zod: true });
  });

  it('rejects STALE without advertised_by', () => {
    expect(verdicts(mutated((d) => delete d.capabilities[1].evidence.advertised_by))).toEqual({ ajv: false, zod: false });
  });

  it('rejects evidence without source', () => {
    expect(verdicts(mutated((d) => delete d.capabilities[2].evidence.source))).toEqual({ ajv: false, zod: false });
  });

  for (const id of ['Gateway.execute', 'gateway', 'gateway.', 'gateway.Execute', '1gateway.execute', 'gateway.exe-cute', 'a.b.c']) {
    it(`rejects the bad id ${JSON.stringify(id)}`, () => {
      expect(verdicts(mutated((d) => (d.capabilities[0].id = id)))).toEqual({ ajv: false, zod: false });
    });
  }

  it('rejects a bad related capability id', () => {
    expect(verdicts(mutated((d) => (d.capabilities[0].related_capabilities = ['nope'])))).toEqual({ ajv: false, zod: false });
  });

  for (const version of ['1.0', '1.0.0-beta', 'v1.0.0', '01.0.0', '1.0.0.0', '']) {
    it(`rejects the bad registry_version ${JSON.stringify(version)}`, () => {
      expect(verdicts(mutated((d) => (d.registry_version = version)))).toEqual({ ajv: false, zod: false });
    });
  }

  it('rejects empty capabilities', () => {
    expect(verdicts(mutated((d) => (d.capabilities = [])))).toEqual({ ajv: false, zod: false });
  });

  it('rejects non-RFC 3339 or non-UTC generated_at', () => {
    expect(verdicts(mutated((d) => (d.generated_at = '2025-01-02 03:04:05')))).toEqual({ ajv: false, zod: false });
    expect(verdicts(mutated((d) => (d.generated_at = 'yesterday')))).toEqual({ ajv: false, zod: false });
  });

  it('rejects unknown enum values', () => {
    expect(verdicts(mutated((d) => (d.capabilities[2].status = 'BETA')))).toEqual({ ajv: false, zod: false });
    expect(verdicts(mutated((d) => (d.capabilities[2].surface = 'GRPC')))).toEqual({ ajv: false, zod: false });
    expect(verdicts(mutated((d) => (d.capabilities[2].auth = 'basic')))).toEqual({ ajv: false, zod: false });
    expect(verdicts(mutated((d) => (d.network.operational_status = 'fine')))).toEqual({ ajv: false, zod: false });
  });

  it('rejects a body_sha256 that is not 64 lowercase hex', () => {
    expect(verdicts(mutated((d) => (d.capabilities[0].evidence.probe.body_sha256 = 'A'.repeat(64))))).toEqual({ ajv: false, zod: false });
    expect(verdicts(mutated((d) => (d.capabilities[0].evidence.probe.body_sha256 = 'a'.repeat(63))))).toEqual({ ajv: false, zod: false });
  });

  it('rejects a probe artifact that is an absolute path or URL', () => {
    expect(verdicts(mutated((d) => (d.capabilities[0].evidence.probe.artifact = '/etc/passwd')))).toEqual({ ajv: false, zod: false });
    expect(verdicts(mutated((d) => (d.capabilities[0].evidence.probe.artifact = 'https://x.example/a')))).toEqual({ ajv: false, zod: false });
  });

  it('rejects a metric definition with an empty description', () => {
    expect(verdicts(mutated((d) => (d.metric_definitions.availability.description = '')))).toEqual({ ajv: false, zod: false });
  });

  it('zod also rejects out-of-order capabilities, duplicate ids and an id outside its product', () => {
    const swapped = mutated((d) => d.capabilities.reverse());
    expect(RegistryDocument.safeParse(swapped).success).toBe(false);
    const duplicate = mutated((d) => d.capabilities.push(d.capabilities[2]));
    expect(RegistryDocument.safeParse(duplicate).success).toBe(false);
    const wrongProduct = mutated((d) => (d.capabilities[2].product = 'mev'));
    expect(RegistryDocument.safeParse(wrongProduct).success).toBe(false);
  });
});
