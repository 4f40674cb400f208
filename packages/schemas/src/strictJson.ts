/**
 * Strict JSON parsing shared by every surface that reads JSON from outside (REST and `/trpc`
 * bodies, MCP, the builder's JSON-RPC, providers' answers): `JSON.parse`, plus a refusal of number
 * literals that do not survive the trip to a JavaScript number and back.
 *
 * `JSON.parse` turns `1e400` into `Infinity` (and `-1e400` into `-Infinity`); schema validators
 * accept those as numbers, the value is then sent onward as `null` (`JSON.stringify(Infinity)`),
 * and canonicalization (RFC 8785) throws. A literal is refused when
 * - its value is not finite (overflow: `1e400`, `-1e400`);
 * - it is not zero but its value is (underflow: `1e-400`);
 * - it is an integer literal (no fraction, no exponent) beyond ±(2^53 − 1), whose digits a double
 *   cannot all keep (`9007199254740993` reads as `...992`).
 * Decimal fractions keep the nearest double (`0.1`), as every JSON reader does.
 */

/** A number literal that does not round-trip; `literal` is its text (at most 40 characters), `path` where it sits. */
export class JsonNumberError extends Error {
  override name = 'JsonNumberError';
  constructor(
    readonly literal: string,
    readonly path: (string | number)[],
  ) {
    super(`The JSON number ${literal}${path.length ? ` at ${path.join('.')}` : ''} is not a finite, exactly representable number; send it as a string.`);
  }
}

/**
 * The first number literal of `text` (outside strings) that does not round-trip, or undefined.
 * Linear and iterative (no recursion); `text` need not be valid JSON.
 */
export function unsafeJsonNumber(text: string): string | undefined {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    // a number starts with '-' or a digit outside strings
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) continue;
    let j = i + 1;
    while (j < text.length) {
      const d = text.charCodeAt(j);
      // digits . e E + -
      if ((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d) j++;
      else break;
    }
    const literal = text.slice(i, j);
    i = j - 1;
    if (!numberRoundTrips(literal)) return literal.length > 40 ? `${literal.slice(0, 37)}...` : literal;
  }
  return undefined;
}

/** Whether a JSON number literal keeps its value as a JavaScript number (see the module comment). */
export function numberRoundTrips(literal: string): boolean {
  const value = Number(literal);
  if (Number.isNaN(value)) return true; // not a number literal: JSON.parse decides
  if (!Number.isFinite(value)) return false;
  if (value === 0) return !/[1-9]/.test(literal.replace(/[eE].*$/, ''));
  if (/^-?\d+$/.test(literal)) return Number.isSafeInteger(value);
  return true;
}

/**
 * `JSON.parse(text)` that refuses number literals which do not round-trip.
 * Throws SyntaxError for invalid JSON, {@link JsonNumberError} (with the offending path) for such a number.
 */
export function parseStrictJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  const literal = unsafeJsonNumber(text);
  if (literal !== undefined) throw new JsonNumberError(literal, pathOfUnsafeNumber(value) ?? []);
  return value;
}

/**
 * A value already parsed by someone else (e.g. an HTTP framework): throws {@link JsonNumberError}
 * when it holds a non-finite number. Iterative walk.
 */
export function assertFiniteNumbers(value: unknown): void {
  const path = pathOfUnsafeNumber(value);
  if (path) throw new JsonNumberError('a non-finite number', path);
}

/** The path to the first non-finite number in `value`, or undefined. */
function pathOfUnsafeNumber(value: unknown): (string | number)[] | undefined {
  const stack: { v: unknown; path: (string | number)[] }[] = [{ v: value, path: [] }];
  while (stack.length) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: [...path, i] });
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) stack.push({ v: x, path: [...path, k] });
    }
  }
  return undefined;
}
