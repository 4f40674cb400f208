/**
 * Named request limits (issue "unbounded work before payment"; docs/decisions.md "Further decisions" → Limits): a
 * bound on a count or a length that a caller chooses, checked by zod (`.max()`, so the OpenAPI
 * document shows `maxItems` / `maxLength`) before any payment. Its zod message ends with
 * `(limit <name>)`; the gateway answers such an issue with 422 problem+json carrying `limit` (the
 * name) and `max`, instead of the 400 of a malformed request.
 */

/** Most capabilities one job may list. */
export const MAX_JOB_CAPABILITIES = 50;
/** Most steps one job may plan. */
export const MAX_JOB_STEPS = 100;
/** Longest job objective, characters (it is copied into every objective step). */
export const MAX_JOB_OBJECTIVE_CHARS = 4000;
/** Largest `input` of one job step, bytes of its JSON (UTF-8); over it the job is refused with 413. */
export const MAX_JOB_STEP_INPUT_BYTES = 64 * 1024;

/**
 * Longest decimal amount string (`amount_usdc` of a deposit): 10000.000000 has 12 characters; a
 * longer one (trailing zeros) was parsed by a regex whose work grew with the square of its length.
 */
export const MAX_DECIMAL_AMOUNT_CHARS = 32;

const LIMIT_SUFFIX = /\(limit ([a-z][a-z0-9_]*)\)$/;

/** The zod message of a named limit: `at most 100 steps (limit steps)`. */
export function limitMessage(limit: string, max: number, what: string): string {
  return `at most ${max} ${what} (limit ${limit})`;
}

/** The limit name in a zod issue message written by {@link limitMessage}, else undefined. */
export function namedLimitOf(message: string): string | undefined {
  return LIMIT_SUFFIX.exec(message)?.[1];
}
