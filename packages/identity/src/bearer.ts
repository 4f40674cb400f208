/**
 * What an HTTP `Authorization` header carries (RFC 6750 section 2.1, `Bearer <token>`, the scheme
 * in any case): `none` when it is absent or empty, `malformed` when it is not one Bearer token, or
 * the token. The one parser of the workspace's bearer headers (REST, /trpc, MCP, the pages):
 * what a token is worth is {@link TokenStore.resolve}'s (or the admin token's) to decide.
 */
export type BearerCredential = { kind: 'none' } | { kind: 'malformed' } | { kind: 'bearer'; token: string };

/** Reads `authorization` (a header value, first one) as a {@link BearerCredential}; never throws. */
export function readBearer(authorization: string | null | undefined): BearerCredential {
  if (!authorization) return { kind: 'none' };
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return m ? { kind: 'bearer', token: m[1] } : { kind: 'malformed' };
}

/** The token of a well-formed `Authorization: Bearer <token>`, else undefined (absent or malformed alike). */
export function bearerTokenOf(authorization: string | null | undefined): string | undefined {
  const c = readBearer(authorization);
  return c.kind === 'bearer' ? c.token : undefined;
}
