import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SDK_INSTALL_COMMENT_LINES, SDK_INSTALL_LINES } from '../src/web/pages/sdkInstall.js';

const sdk = JSON.parse(readFileSync(new URL('../../../packages/sdk/package.json', import.meta.url), 'utf8')) as { name: string; version: string };

describe('SDK install instructions on the web pages', () => {
  it('pack the SDK workspace of this repository and install the tarball npm pack writes', () => {
    expect(SDK_INSTALL_LINES).toContain(`npm ci && npm pack -w ${sdk.name}`);
    const install = SDK_INSTALL_LINES.find((l) => l.startsWith('npm install '));
    expect(install).toBeDefined();
    // npm pack names the tarball <name>-<version>.tgz; the glob in the command must match it
    const glob = install!.split(' ')[2]!.split('/').pop()!;
    const pattern = new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace('*', '.*')}$`);
    expect(pattern.test(`${sdk.name}-${sdk.version}.tgz`)).toBe(true);
    expect(install).toContain(' viem');
  });

  it('writes the same commands as JavaScript comments for the snippets', () => {
    expect(SDK_INSTALL_COMMENT_LINES).toHaveLength(SDK_INSTALL_LINES.length);
    for (const [i, line] of SDK_INSTALL_COMMENT_LINES.entries()) {
      expect(line.startsWith('//')).toBe(true);
      expect(line).toContain(SDK_INSTALL_LINES[i]!.replace(/^# /, ''));
    }
  });
});
