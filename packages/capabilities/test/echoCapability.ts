import { z } from 'zod';
import { PAID_THROUGH_EXECUTE, type DefineCapabilityParameters, type ExecutableCapability } from '../src/index.js';

/** Input of the echo test capabilities: `{text}`, a non-empty string. */
export const EchoInput = z.strictObject({ text: z.string().min(1) });
/** Output of the echo test capabilities: `{text}`. */
export const EchoOutput = z.strictObject({ text: z.string() });

/** What {@link echoCapabilityParameters} takes besides the id; each field has a default. */
export interface EchoCapabilityOptions {
  /** Price per call in USDC base units (6 decimals); default `1000n` (0.001 USDC). */
  price?: bigint;
  /** The example's input `text` and the `text` of its result; default `'hi'` → `'hi'`. */
  example?: { text: string; result: string };
}

/** A test capability's definition without `run`: schemas and price are set, so adding `run` makes it executable. */
export type EchoCapabilityParameters = DefineCapabilityParameters<typeof EchoInput, typeof EchoOutput> &
  Pick<ExecutableCapability<typeof EchoInput, typeof EchoOutput>, 'input' | 'output' | 'price'>;

/**
 * The definition, without `run`, of a capability that tests add to the built-ins: `{text}` in,
 * `{text}` out ({@link EchoInput}, {@link EchoOutput}), product `intelligence`, named "Echo (test)",
 * built, no docs, paid per call through `POST /api/v1/execute` ({@link PAID_THROUGH_EXECUTE}) at
 * `price` (default 0.001 USDC per call), with a complete example: the execute request and a
 * SUCCEEDED execution paid that price. Spread it into `defineCapability` with the test's own `run`
 * and whatever else the test needs (name, description, input, readOnly, precondition).
 *
 * @example
 * const shout = defineCapability({
 *   ...echoCapabilityParameters('intelligence.shout_test', { example: { text: 'hello', result: 'HELLO' } }),
 *   name: 'Shout (test)',
 *   run: async ({ text }) => ({ text: text.toUpperCase() }),
 * });
 */
export function echoCapabilityParameters(
  id: `intelligence.${string}`,
  { price = 1000n, example = { text: 'hi', result: 'hi' } }: EchoCapabilityOptions = {},
): EchoCapabilityParameters {
  return {
    ...PAID_THROUGH_EXECUTE,
    id,
    product: 'intelligence',
    name: 'Echo (test)',
    description: 'Returns the text it is given.',
    docs: null,
    built: true,
    price: { base_units: price, unit: 'call' },
    input: EchoInput,
    output: EchoOutput,
    example: {
      request: { capability_id: id, input: { text: example.text } },
      response: {
        execution_id: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T',
        status: 'SUCCEEDED',
        result: { text: example.result },
        payment: { tx_hash: `0x${'1'.repeat(64)}`, amount: price.toString() },
      },
    },
  };
}
