import type { PaymentPayload } from '@x402/core/types';
import { describe, expect, it } from 'vitest';
import { PAYMENT_IDENTIFIER, PAYMENT_IDENTIFIER_DECLARATION, PaymentError, readPaymentIdentifier } from '../src/index.js';

const payload = (extension: unknown): PaymentPayload =>
  ({ x402Version: 2, accepted: {}, payload: {}, extensions: extension === undefined ? {} : { [PAYMENT_IDENTIFIER]: extension } }) as unknown as PaymentPayload;

describe('readPaymentIdentifier (x402 payment-identifier)', () => {
  const id = 'pay_0123456789abcdef';

  it('reads the id of an echoed declaration, and none when absent', () => {
    expect(readPaymentIdentifier(payload({ ...PAYMENT_IDENTIFIER_DECLARATION, info: { ...PAYMENT_IDENTIFIER_DECLARATION.info, id } }))).toBe(id);
    expect(readPaymentIdentifier(payload({ ...PAYMENT_IDENTIFIER_DECLARATION }))).toBeUndefined();
    expect(readPaymentIdentifier(payload(undefined))).toBeUndefined();
  });

  it('refuses a malformed id or extension with invalid_payment_identifier', () => {
    for (const bad of [{ info: { required: false, id: 'short' } }, { info: { required: 'no', id } }, { info: { required: false, id: 42 } }, 'x']) {
      expect(() => readPaymentIdentifier(payload(bad))).toThrow(PaymentError);
    }
  });

  it('never compiles a schema the client sends: the echoed schema is ignored, the rules are ours', () => {
    // a schema that Ajv cannot compile (unresolvable $ref): compiling it per request would refuse the payment and cost CPU
    const echoed = { info: { required: false, id }, schema: { $ref: '#/$defs/missing', type: 'object' } };
    expect(readPaymentIdentifier(payload(echoed))).toBe(id);
  });
});
