import escapeHtml from 'escape-html';

/**
 * Markup that is already safe to write into a page: made only by the {@link html} tag (which
 * escapes every interpolated value) or explicitly by {@link raw}.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** What may be interpolated into {@link html}: text (escaped), numbers, safe markup, lists of them; null, undefined and false write nothing. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function write(v: HtmlValue): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(write).join('');
  return escapeHtml(String(v));
}

/**
 * Tagged template that escapes every interpolated value for HTML text and quoted attribute values
 * (`& < > " '`, with `escape-html`), except values that are themselves `html` results, so templates
 * nest. Attributes must be quoted in the template (`href="${url}"`).
 *
 * @example html`<a href="/capabilities/${id}">${name}</a>`
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += write(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

/** Marks trusted markup (our own constants: CSS, inline SVG) as safe. Never pass request or catalog data. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/**
 * JSON for an inline `<script type="application/json">` block: `<`, `>`, `&`, U+2028 and U+2029
 * escaped as `\u` sequences, so no value can close the script element.
 */
export function jsonScript(value: unknown): SafeHtml {
  const text = JSON.stringify(value ?? null).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return new SafeHtml(text);
}
