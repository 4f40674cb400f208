import type { GatewayResponse } from '../http.js';
import { GatewayError, UnknownCapabilityError } from '../errors.js';
import { parseProblem } from '../protocol.js';

/**
 * Throws the error of a non-2xx answer: {@link UnknownCapabilityError} for a 404 about a
 * capability when `capabilityId` is given, else {@link GatewayError} with the RFC 9457 problem.
 */
export function throwForStatus(r: GatewayResponse, capabilityId?: string): never {
  const problem = parseProblem(r.response.status, r.text);
  if (capabilityId && r.response.status === 404 && /capabilit/i.test(problem.detail)) throw new UnknownCapabilityError(capabilityId, { problem });
  throw new GatewayError(problem);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
