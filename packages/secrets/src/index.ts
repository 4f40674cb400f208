/** @acg/secrets: encryption at rest of stored signing secrets (packages/secrets/README.md). */
export { SecretBox, secretBoxFromKey } from './secretBox.js';
