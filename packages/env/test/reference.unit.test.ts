import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { acceptedValues, checkedVariables, ENV_REFERENCE, renderConfigurationDoc } from '../src/index.js';

const DOC = new URL('../../../docs/configuration.md', import.meta.url);

describe('docs/configuration.md, generated from the environment schema', () => {
  it('documents every variable a startup schema checks', () => {
    const documented = new Set(ENV_REFERENCE.flatMap((e) => e.names));
    const missing = checkedVariables().filter((name) => !documented.has(name));
    expect(missing, 'add an entry to ENV_REFERENCE (packages/env/src/reference.ts), then run `npm run docs:config`').toEqual([]);
  });

  it('documents each variable once', () => {
    const names = ENV_REFERENCE.flatMap((e) => e.names);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it('says what a check accepts in the schema’s own words', () => {
    expect(acceptedValues('GATEWAY_PORT')).toBe('must be an integer port 0..65535');
    expect(acceptedValues('TRUST_PROXY')).toBeUndefined();
    expect(renderConfigurationDoc()).toContain(
      '- `GATEWAY_PORT`: gateway HTTP port\n  - default: `8080`\n  - checked at startup (gateway, worker, `npm start`): an integer port 0..65535\n',
    );
  });

  it('is exactly what `npm run docs:config` writes (run it after changing a variable)', () => {
    expect(readFileSync(DOC, 'utf8')).toBe(renderConfigurationDoc());
  });
});
