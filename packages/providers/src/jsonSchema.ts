import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { ProviderError } from './errors.js';

// ajv-formats is CommonJS: its default export is the plugin function (under `.default` when transpiled)
const addFormats = ((addFormatsPlugin as unknown as { default?: unknown }).default ?? addFormatsPlugin) as (ajv: Ajv2020) => Ajv2020;

/** One issue of a JSON Schema validation: the JSON path inside the checked value and Ajv's message. */
export interface SchemaIssue {
  path: (string | number)[];
  message: string;
  code: string;
}

const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false, validateSchema: true }));
const compiled = new Map<string, ValidateFunction>();

function pathOf(e: ErrorObject): (string | number)[] {
  const parts = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  const missing = (e.params as { missingProperty?: string }).missingProperty;
  if (missing) parts.push(missing);
  return parts.map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

/** Ajv's errors as {@link SchemaIssue}s (at most 20). */
export function schemaIssues(errors: ErrorObject[] | null | undefined): SchemaIssue[] {
  return (errors ?? []).slice(0, 20).map((e) => ({ path: pathOf(e), message: e.message ?? 'is invalid', code: e.keyword }));
}

/**
 * Compiles a provider's JSON Schema (2020-12 by default; Ajv with ajv-formats), cached by its
 * text. Throws {@link ProviderError} `invalid_schema` (400) naming `field` when the schema is not a
 * valid JSON Schema or does not compile (e.g. an unresolvable `$ref`); remote `$ref`s are never fetched.
 */
export function compileJsonSchema(schema: Record<string, unknown>, field: string): ValidateFunction {
  const text = JSON.stringify(schema);
  const hit = compiled.get(text);
  if (hit) return hit;
  if (!ajv.validateSchema(schema)) {
    throw new ProviderError('invalid_schema', 400, `${field} is not a valid JSON Schema.`, { errors: schemaIssues(ajv.errors).map((i) => ({ ...i, field })) });
  }
  let validate: ValidateFunction;
  try {
    // a schema's own `$id` would clash on the second compile of an equal-but-reordered schema: compile a copy without it
    const { $id: _id, ...rest } = schema;
    validate = ajv.compile(rest);
  } catch (e) {
    throw new ProviderError('invalid_schema', 400, `${field} does not compile: ${String((e as Error).message).slice(0, 200)}`);
  }
  if (compiled.size > 5_000) compiled.clear();
  compiled.set(text, validate);
  return validate;
}
