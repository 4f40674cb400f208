import { describe, expect, it } from 'vitest';
import { DEMO_DEFAULT_GATEWAY_URL, DEMO_DEFAULT_RPC_URL, demoCommand } from '../src/demoCommand.js';

describe('demoCommand', () => {
  it('is plain `npm run demo` for the gateway at the demo default', () => {
    expect(demoCommand(DEMO_DEFAULT_GATEWAY_URL, true)).toBe('npm run demo');
    expect(demoCommand(`${DEMO_DEFAULT_GATEWAY_URL}/`, true)).toBe('npm run demo');
  });

  it('names the gateway URL when the port (or host) differs', () => {
    expect(demoCommand('http://127.0.0.1:18080', true)).toBe('GATEWAY_URL=http://127.0.0.1:18080 npm run demo');
    expect(demoCommand('http://0.0.0.0:8080', true)).toBe('GATEWAY_URL=http://0.0.0.0:8080 npm run demo');
  });

  it('names the MCP demo the same way', () => {
    expect(demoCommand(DEMO_DEFAULT_GATEWAY_URL, true, 'demo:mcp')).toBe('npm run demo:mcp');
    expect(demoCommand('http://127.0.0.1:18080', true, 'demo:mcp')).toBe('GATEWAY_URL=http://127.0.0.1:18080 npm run demo:mcp');
  });

  it('asks for a funded key when no dev payment chain runs', () => {
    expect(demoCommand('http://127.0.0.1:18080', false)).toBe('GATEWAY_URL=http://127.0.0.1:18080 DEMO_PRIVATE_KEY=0x… npm run demo');
  });

  it('names the payment chain for the JS demo (its channel reads) when it is not at the default', () => {
    expect(demoCommand(DEMO_DEFAULT_GATEWAY_URL, true, 'demo', DEMO_DEFAULT_RPC_URL)).toBe('npm run demo');
    expect(demoCommand('http://127.0.0.1:18080', true, 'demo', 'http://127.0.0.1:18545')).toBe(
      'GATEWAY_URL=http://127.0.0.1:18080 DEMO_RPC_URL=http://127.0.0.1:18545 npm run demo',
    );
    expect(demoCommand('http://127.0.0.1:18080', true, 'demo:mcp', 'http://127.0.0.1:18545')).toBe('GATEWAY_URL=http://127.0.0.1:18080 npm run demo:mcp');
  });

  it('matches the defaults the demo script itself uses', async () => {
    const { readFile } = await import('node:fs/promises');
    const demo = await readFile(new URL('../../../packages/sdk/examples/demo.mjs', import.meta.url), 'utf8');
    expect(demo).toContain(`process.env.GATEWAY_URL ?? '${DEMO_DEFAULT_GATEWAY_URL}'`);
    expect(demo).toContain(`process.env.DEMO_RPC_URL ?? '${DEMO_DEFAULT_RPC_URL}'`);
  });
});
