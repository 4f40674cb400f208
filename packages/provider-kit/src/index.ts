/**
 * @acg/provider-kit: the provider kit (docs/decisions.md "Providers"). A third party defines capabilities with
 * zod, serves them behind the gateway's Standard Webhooks signature (verified over the raw body)
 * with results signed by its wallet (EIP-191 over `acg-result:<execution_id>:<result_sha256>`),
 * and onboards itself through the gateway's public API (EIP-191 challenge, register or update).
 * It imports no app.
 */
export {
  defineProviderCapability,
  InvalidProviderCapabilityError,
  ProviderRunError,
  toOffer,
  type ProviderCallContext,
  type ProviderCapability,
  type ProviderCapabilityParameters,
} from './define.js';
export { createProvider, DEFAULT_MAX_BODY_BYTES, type CreateProviderOptions, type Provider, type ProviderLog, type RunningProvider } from './provider.js';
export { onboard, problemCode, ProviderOnboardingError, type OnboardingStep, type OnboardParameters, type OnboardReturnType } from './onboard.js';
export { canonicalJson, resultSha256, resultSignatureMessage, signResult, verifyResultSignature } from './resultSignature.js';
export { PROBLEM_CONTENT_TYPE, problem, type Problem, type ProblemIssue } from './problem.js';
