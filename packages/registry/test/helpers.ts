import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { BUILTIN_CAPABILITIES } from '@acg/capabilities';
import type { BuildContext } from '../src/index.js';

/** A strict Ajv for JSON Schema 2020-12 with the standard formats. */
export function strictAjv() {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  return ajv;
}

export const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
export const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

/** A build context as the gateway on the dev chain would pass it (the built-in capabilities). */
export function context(overrides: Partial<BuildContext> = {}): BuildContext {
  return {
    baseUrl: 'http://127.0.0.1:8080/',
    builderUrl: 'http://127.0.0.1:8081',
    generatedAt: '2025-01-02T03:04:05.678Z',
    payment: { network: 'eip155:8453', asset: USDC, payTo: PAY_TO },
    capabilities: BUILTIN_CAPABILITIES,
    ...overrides,
  };
}

/**
 * Minimal XML well-formedness check (enough for sitemaps): one root element, properly nested
 * and matching tags, quoted attributes, and no `&` outside a predefined or numeric entity.
 * Returns a list of problems (empty when well-formed).
 */
export function xmlProblems(xml: string): string[] {
  const problems: string[] = [];
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  if (/<\?xml/.test(body)) problems.push('misplaced XML declaration');
  const stack: string[] = [];
  let roots = 0;
  const entity = /&(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/g;
  for (const token of body.match(/<[^>]*>|[^<]+/g) ?? []) {
    if (token.startsWith('<')) {
      if (token.includes('<', 1)) problems.push(`unterminated tag: ${token}`);
      const close = /^<\/([A-Za-z_][\w.-]*)\s*>$/.exec(token);
      const open = /^<([A-Za-z_][\w.:-]*)((?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>$/.exec(token);
      if (close) {
        if (stack.pop() !== close[1]) problems.push(`mismatched closing tag ${token}`);
      } else if (open) {
        if (stack.length === 0) roots += 1;
        if (open[2].replace(entity, '').includes('&')) problems.push(`bare & in attributes of ${token}`);
        if (!open[3]) stack.push(open[1]);
      } else {
        problems.push(`malformed tag ${token}`);
      }
    } else {
      if (stack.length === 0 && token.trim() !== '') problems.push(`text outside the root: ${token.trim()}`);
      if (token.replace(entity, '').includes('&')) problems.push(`bare & in text: ${token}`);
    }
  }
  if (stack.length > 0) problems.push(`unclosed tags: ${stack.join(', ')}`);
  if (roots !== 1) problems.push(`expected one root element, found ${roots}`);
  return problems;
}
