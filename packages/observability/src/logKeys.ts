/**
 * The top-level keys of one JSON object line, in order, read from the raw text (JSON.parse would
 * keep only the last of a repeated key and hide it). For checking log lines: pino writes a key
 * once per binding, so a key bound twice shows twice here.
 *
 * @example topLevelKeys('{"a":1,"b":{"a":2},"a":3}') // ['a', 'b', 'a']
 */
export function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      let j = i + 1;
      while (j < line.length && line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      if (depth === 1 && expectKey) keys.push(JSON.parse(line.slice(i, j + 1)) as string);
      expectKey = false;
      i = j;
    } else if (c === '{' || c === '[') {
      depth++;
      expectKey = c === '{' && depth === 1;
    } else if (c === '}' || c === ']') {
      depth--;
    } else if (c === ',' && depth === 1) {
      expectKey = true;
    }
  }
  return keys;
}

/** Keys that occur more than once at the top level of a JSON object line (see {@link topLevelKeys}). */
export function repeatedKeys(line: string): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const k of topLevelKeys(line)) (seen.has(k) ? repeated : seen).add(k);
  return [...repeated];
}
