import { html, type SafeHtml } from '../html.js';

/** A JSON Schema object, as read from the registry (only the keywords the table shows). */
type Schema = Record<string, unknown>;

/** One row of a schema table: a property path (`a.b`, `items[].c`), its type, whether it is required, constraints and description. */
export interface SchemaRow {
  path: string;
  type: string;
  required: boolean;
  constraints: string[];
  description: string;
}

const MAX_DEPTH = 6;

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The type of a schema in words: `string`, `integer | null`, `object`, `array of string`, `one of 2 shapes`. */
function typeText(s: Schema): string {
  if (Array.isArray(s.type)) return s.type.join(' | ');
  if (typeof s.type === 'string') {
    if (s.type === 'array' && isSchema(s.items)) return `array of ${typeText(s.items)}`;
    if (s.type === 'object' && !isSchema(s.properties) && s.additionalProperties !== false) return 'object (any keys)';
    return s.type;
  }
  const variants = (s.oneOf ?? s.anyOf) as unknown;
  if (Array.isArray(variants)) return variants.map((v) => (isSchema(v) ? typeText(v) : 'any')).join(' | ');
  if (typeof s.$ref === 'string') return s.$ref.split('/').pop() ?? 'reference';
  if ('const' in s) return typeof s.const;
  if (Array.isArray(s.enum)) return 'enum';
  return 'any';
}

/**
 * Bounds that are the implementation's limits, not the capability's (zod's `int()` writes
 * ±Number.MAX_SAFE_INTEGER; a double's range): a person learns nothing from "≤ 9007199254740991".
 */
const IMPLEMENTATION_LIMITS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, Number.MAX_VALUE, -Number.MAX_VALUE]);

/** Constraints in words: const, enum, pattern, format, bounds (without {@link IMPLEMENTATION_LIMITS}), default. */
function constraintsOf(s: Schema): string[] {
  const out: string[] = [];
  if ('const' in s) out.push(`always ${JSON.stringify(s.const)}`);
  if (Array.isArray(s.enum)) out.push(`one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  if (typeof s.format === 'string') out.push(`format ${s.format}`);
  if (typeof s.pattern === 'string') out.push(`pattern ${s.pattern}`);
  for (const [k, label] of [
    ['minimum', '≥'],
    ['exclusiveMinimum', '>'],
    ['maximum', '≤'],
    ['exclusiveMaximum', '<'],
  ] as const) {
    const bound = s[k];
    if (typeof bound === 'number' && !IMPLEMENTATION_LIMITS.has(bound)) out.push(`${label} ${bound}`);
  }
  if (typeof s.minLength === 'number') out.push(`at least ${s.minLength} characters`);
  if (typeof s.maxLength === 'number') out.push(`at most ${s.maxLength} characters`);
  if (typeof s.minItems === 'number') out.push(`at least ${s.minItems} items`);
  if (typeof s.maxItems === 'number') out.push(`at most ${s.maxItems} items`);
  if ('default' in s) out.push(`default ${JSON.stringify(s.default)}`);
  return out;
}

/**
 * Flattens a JSON Schema object into rows, one per property, nested objects and arrays of
 * objects included (`native.balance`, `opportunities[].borrower`), at most six levels deep.
 */
export function schemaRows(schema: Schema, prefix = '', depth = 0): SchemaRow[] {
  const rows: SchemaRow[] = [];
  const props = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  for (const [name, raw] of Object.entries(props)) {
    if (!isSchema(raw)) continue;
    const path = prefix ? `${prefix}.${name}` : name;
    rows.push({
      path,
      type: typeText(raw),
      required: required.has(name),
      constraints: constraintsOf(raw),
      description: typeof raw.description === 'string' ? raw.description : '',
    });
    if (depth >= MAX_DEPTH) continue;
    if (isSchema(raw.properties)) rows.push(...schemaRows(raw, path, depth + 1));
    else if (raw.type === 'array' && isSchema(raw.items) && isSchema(raw.items.properties)) rows.push(...schemaRows(raw.items, `${path}[]`, depth + 1));
  }
  return rows;
}

/** The shapes a schema allows: its `oneOf`/`anyOf` variants, or itself. */
function variantsOf(schema: Schema): Schema[] {
  const v = (schema.oneOf ?? schema.anyOf) as unknown;
  if (Array.isArray(v) && !isSchema(schema.properties)) return v.filter(isSchema);
  return [schema];
}

/**
 * A schema for people: a table of its properties (name, type, required, constraints,
 * description) per allowed shape, and the raw JSON in a collapsed `<details>`. `id` prefixes
 * the element ids (`input`, `output`).
 */
export function schemaSection(id: string, title: string, schema: unknown): SafeHtml {
  if (!isSchema(schema)) return html`<h3 id="${id}-schema">${title}</h3><p class="empty">Not specified yet.</p>`;
  const variants = variantsOf(schema);
  const tables = variants.map((v, i) => {
    const rows = schemaRows(v);
    const caption = variants.length > 1 ? `${title}, shape ${i + 1} of ${variants.length}` : title;
    if (rows.length === 0) return html`<p>${caption}: ${typeText(v)}${constraintsOf(v).length ? ` (${constraintsOf(v).join('; ')})` : ''}.</p>`;
    return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0"><table data-schema="${id}">
<caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col">Property</th><th scope="col">Type</th><th scope="col">Required</th><th scope="col">Constraints and description</th></tr></thead>
<tbody>${rows.map(
      (r) =>
        html`<tr><th scope="row"><code>${r.path}</code></th><td>${r.type}</td><td>${r.required ? 'yes' : 'no'}</td><td>${[...r.constraints, r.description].filter(Boolean).join('; ')}</td></tr>`,
    )}</tbody>
</table></div>`;
  });
  return html`<h3 id="${id}-schema">${title}</h3>
${variants.length > 1 ? html`<p>One of ${variants.length} shapes.</p>` : ''}
${tables}
<details><summary>${title}: raw JSON Schema</summary><pre tabindex="0"><code data-raw-schema="${id}">${JSON.stringify(schema, null, 2)}</code></pre></details>`;
}
