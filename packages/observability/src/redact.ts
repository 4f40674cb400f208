/**
 * Secrets out of log lines (docs/operating.md → Logs). RPC providers put API keys in URL paths
 * (`https://base-mainnet.example.com/v2/<key>`) and viem writes the request URL into its error
 * text; Redis and webhook URLs may carry credentials in their user info or query. So every line a
 * service logger writes passes through {@link lineRedactor}: each URL keeps its scheme, host and
 * port only (`https://base-mainnet.example.com/…`), and each known secret value (the values of the
 * environment's `*_KEY`, `*_SECRET`, `*_TOKEN` and `*PASSWORD*` variables, see
 * {@link secretValuesFromEnv}) becomes `[redacted]`. Fields named like secrets are censored by
 * pino's `redact` ({@link REDACT_PATHS}) before that.
 */

/** What replaces a secret value, and a field in {@link REDACT_PATHS}. */
export const REDACTED = '[redacted]';

/**
 * Field paths pino's `redact` censors (fast-redact syntax: `*` is one level): authorization
 * headers, tokens, passwords, private keys and secrets, at the top of a line or one level down.
 */
export const REDACT_PATHS: readonly string[] = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.authorization',
  'password',
  '*.password',
  'secret',
  '*.secret',
  'privateKey',
  '*.privateKey',
  'private_key',
  '*.private_key',
  'access_token',
  '*.access_token',
  'signing_secret',
  '*.signing_secret',
];

/** Environment variable names whose values are secrets. */
const SECRET_NAME = /(_KEY|_SECRET|_TOKEN)$|PASSWORD/;

/** Shortest value treated as a secret (shorter ones, e.g. `0`, would mask ordinary text). */
const MIN_SECRET_LENGTH = 8;

/**
 * The values of `env`'s secret variables: names ending in `_KEY`, `_SECRET` or `_TOKEN`, or
 * containing `PASSWORD` (FACILITATOR_PRIVATE_KEY, WEBHOOK_SECRET_KEY, ADMIN_TOKEN, ...), at least
 * 8 characters long. Both a value and its `0x`-less form are listed for hex keys.
 */
export function secretValuesFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (!value || value.length < MIN_SECRET_LENGTH || !SECRET_NAME.test(name)) continue;
    values.add(value);
    if (/^0x[0-9a-fA-F]+$/.test(value)) values.add(value.slice(2));
  }
  return [...values];
}

/**
 * A URL in log text: scheme, optional user info, host (with port), then the rest (path, query,
 * fragment) up to a character that cannot be in a URL written into JSON or prose (whitespace,
 * quotes, a backslash of a JSON escape, angle brackets, a closing parenthesis or bracket after it).
 */
const URL_IN_TEXT = /\b([a-zA-Z][a-zA-Z0-9+.-]{1,15}):\/\/(?:[^\s"'\\<>/?#@]*@)?([^\s"'\\<>/?#@)\]]+)([/?#][^\s"'\\<>)\]]*)?/g;

/**
 * `text` with every URL cut to `scheme://host[:port]` (`/…` marks a dropped path, query or
 * fragment; user info is dropped silently) and every value of `secrets` replaced by `[redacted]`.
 *
 * @example redactText('URL: https://u:p@rpc.example.com/v2/abc?x=1', []) // 'URL: https://rpc.example.com/…'
 */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text;
  if (out.includes('://')) out = out.replace(URL_IN_TEXT, (_m, scheme: string, host: string, rest?: string) => `${scheme}://${host}${rest ? '/…' : ''}`);
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

/** {@link redactText} for one serialized log line (pino's `hooks.streamWrite`). */
export function lineRedactor(secrets: readonly string[]): (line: string) => string {
  return (line) => redactText(line, secrets);
}
