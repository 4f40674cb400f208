import { ProblemError } from '@acg/schemas';
import { describe, expect, it } from 'vitest';
import {
  internalError,
  invalidParams,
  invalidRequest,
  jsonRpcErrorOf,
  limitExceeded,
  parseError,
  RPC_ERRORS,
  RPC_PROBLEM_TYPES,
  RpcError,
} from '../src/index.js';

// the one mapping of a ProblemError to a JSON-RPC error (docs/architecture.md "Errors")
describe('jsonRpcErrorOf', () => {
  it('maps each builder problem kind to its standard code, the detail as message, the extension members as data', () => {
    expect(jsonRpcErrorOf(invalidParams('txs[2]', 'not a signed transaction', { limit: 3 }))).toEqual({
      code: -32602,
      message: 'Invalid params: txs[2]: not a signed transaction',
      data: { field: 'txs[2]', reason: 'not a signed transaction', limit: 3 },
    });
    expect(jsonRpcErrorOf(invalidRequest('Missing header.', { reason: 'signature_missing' }, 401))).toEqual({
      code: -32600,
      message: 'Missing header.',
      data: { reason: 'signature_missing' },
    });
    expect(jsonRpcErrorOf(parseError('Parse error: the body is not valid JSON.'))).toEqual({
      code: -32700,
      message: 'Parse error: the body is not valid JSON.',
    });
    expect(jsonRpcErrorOf(limitExceeded('Rate limit exceeded.', { retry_after_ms: 250 }))).toEqual({
      code: -32005,
      message: 'Rate limit exceeded.',
      data: { retry_after_ms: 250 },
    });
    expect(jsonRpcErrorOf(internalError('The node refused to simulate this bundle.', { reason: 'x' }, 502))).toEqual({
      code: -32603,
      message: 'The node refused to simulate this bundle.',
      data: { reason: 'x' },
    });
    expect(jsonRpcErrorOf(new RpcError('methodNotFound', 404, 'Method not found.'))).toEqual({ code: -32601, message: 'Method not found.' });
  });

  it('the type decides over the status: an invalid request answered with HTTP 404, 405 or 413 stays -32600', () => {
    for (const status of [404, 405, 413]) expect(jsonRpcErrorOf(invalidRequest('Use POST.', {}, status)).code).toBe(RPC_ERRORS.INVALID_REQUEST);
  });

  it('maps a problem of another type by its status', () => {
    const code = (status: number) => jsonRpcErrorOf(new ProblemError(status, 'x')).code;
    expect(code(400)).toBe(-32602);
    expect(code(422)).toBe(-32602);
    expect(code(404)).toBe(-32601);
    expect(code(401)).toBe(-32600);
    expect(code(403)).toBe(-32600);
    expect(code(409)).toBe(-32600);
    expect(code(429)).toBe(-32005);
    expect(code(500)).toBe(-32603);
    expect(code(502)).toBe(-32603);
    expect(code(503)).toBe(-32603);
  });

  it('data carries every extension member and none of type, title, status, detail, instance', () => {
    const problem = new ProblemError(409, 'Conflict.', { type: 'urn:example:conflict', instance: '/x/1', execution_id: 'e1', reason: 'busy' });
    expect(jsonRpcErrorOf(problem)).toEqual({ code: -32600, message: 'Conflict.', data: { execution_id: 'e1', reason: 'busy' } });
  });

  it('RpcError is the one ProblemError: its code and data read the mapping, its body is the RFC 9457 problem', () => {
    const e = invalidParams('blockNumber', 'required');
    expect(e).toBeInstanceOf(ProblemError);
    expect(e.code).toBe(-32602);
    expect(e.data).toEqual({ field: 'blockNumber', reason: 'required' });
    expect(e.shortMessage).toBe('Invalid params: blockNumber: required');
    expect(e.body).toMatchObject({
      type: RPC_PROBLEM_TYPES.invalidParams,
      title: 'Bad Request',
      status: 400,
      detail: 'Invalid params: blockNumber: required',
      field: 'blockNumber',
    });
  });
});
