export { bearerTokenOf, readBearer, type BearerCredential } from './bearer.js';
export { AuthError } from './errors.js';
export { identityKeys } from './commands/keys.js';
export {
  SIGN_IN_WITH_X_CALL_GAS,
  SIGN_IN_WITH_X_CALL_TIMEOUT_MS,
  SIGN_IN_WITH_X_CALLS_PER_MINUTE,
  SIGN_IN_WITH_X_HEADER,
  SIGN_IN_WITH_X_MAX_AGE_MS,
  SIGN_IN_WITH_X_NONCE_TTL_SECONDS,
  SignInWithX,
  type ContractWalletLimits,
  type SignInWithXSite,
} from './signInWithX.js';
export { SIGN_IN_WITH_X_STATEMENT, SIGN_IN_WITH_X_VALIDITY_SECONDS, SignInWithXChallenges } from './signInWithXChallenges.js';
export { newAccessToken, SiweAuthenticator, type SiweChallenge, type SiweDomain } from './siwe.js';
export { TokenStore, type IssuedToken } from './tokens.js';
