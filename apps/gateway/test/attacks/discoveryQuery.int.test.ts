import { describe, expect, it } from 'vitest';
import { useTestGateway } from '../useTestGateway.js';

/**
 * Attack (issue 36, item 8): lenient query numbers on `GET /discovery/resources`. `limit` and
 * `offset` take plain decimal integers only (no sign, no leading zero, no hex, no exponent, no
 * space): `limit=0x10` was read as 16, `1e1` as 10, `+5` as 5, `%201` as 1 and `01` as 1, and an
 * empty `offset=` as 0 (while an empty `limit=` was 400). Each is a 400 RFC 9457 problem naming
 * the parameter. This file failed before the strict parse (checked).
 */

const t = useTestGateway();

const BAD = ['0x10', '1e1', '+5', '%201', '01', '', ' ', '1.0', '-0', '５'];

describe('GET /discovery/resources reads limit and offset as plain decimal integers', () => {
  for (const name of ['limit', 'offset'] as const) {
    it(`refuses ${name} written any other way: 400 problem naming ${name}`, async () => {
      for (const value of BAD) {
        const q = `${name}=${value}`;
        const res = await fetch(`${t.url}/discovery/resources?${q}`);
        expect(res.status, q).toBe(400);
        expect(res.headers.get('content-type'), q).toContain('application/problem+json');
        const body = (await res.json()) as { status: number; errors?: { path: (string | number)[] }[] };
        expect(body.status, q).toBe(400);
        expect(
          body.errors?.map((e) => e.path.join('.')),
          q,
        ).toContain(name);
      }
    });
  }

  it('still takes plain integers in range, and the defaults when absent', async () => {
    const page = async (q: string) => ((await (await fetch(`${t.url}/discovery/resources?${q}`)).json()) as { pagination: unknown }).pagination;
    expect(await page('limit=16&offset=0')).toMatchObject({ limit: 16, offset: 0 });
    expect(await page('limit=1&offset=3')).toMatchObject({ limit: 1, offset: 3 });
    expect(await page('limit=100&offset=10')).toMatchObject({ limit: 100, offset: 10 });
    expect(await page('')).toMatchObject({ limit: 20, offset: 0 });
    for (const q of ['limit=0', 'limit=101', 'offset=1000001']) expect((await fetch(`${t.url}/discovery/resources?${q}`)).status, q).toBe(400);
  });

  it('documents both as integers in /openapi.json', async () => {
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
      paths: Record<string, { get: { parameters: { name: string; required?: boolean; schema: Record<string, unknown> }[] } }>;
    };
    const params = doc.paths['/discovery/resources'].get.parameters;
    expect(params.find((p) => p.name === 'limit')?.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    expect(params.find((p) => p.name === 'offset')?.schema).toMatchObject({ type: 'integer', minimum: 0, maximum: 1_000_000, default: 0 });
    expect(params.filter((p) => p.name === 'limit' || p.name === 'offset').map((p) => p.required ?? false)).toEqual([false, false]);
  });
});
