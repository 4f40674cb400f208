/**
 * Writes docs/configuration.md from the environment schema and reference of @acg/env
 * (`renderConfigurationDoc`). Run `npm run docs:config` after adding or changing a variable;
 * packages/env/test/reference.unit.test.ts fails while the file differs.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderConfigurationDoc } from '@acg/env';

const target = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
writeFileSync(target, renderConfigurationDoc());
console.log(`wrote ${target}`);
