/**
 * How to install the JavaScript SDK (`agent-capability-gateway-sdk`, `packages/sdk`) while it is
 * not yet published on the npm registry: build its tarball in a clone of the gateway's repository
 * and install that file (docs/overview.md "SDKs" says the same). Once a release is on the
 * registry, `npm install agent-capability-gateway-sdk viem` is enough.
 */
export const SDK_INSTALL_LINES: readonly string[] = [
  '# not yet on the npm registry: build the package in a clone of the gateway repository',
  'npm ci && npm pack -w agent-capability-gateway-sdk',
  '# then, in your project (viem is its peer dependency)',
  'npm install /path/to/agent-capability-gateway-sdk-*.tgz viem',
];

/** {@link SDK_INSTALL_LINES} as comment lines of a JavaScript snippet (`// ...`). */
export const SDK_INSTALL_COMMENT_LINES: readonly string[] = SDK_INSTALL_LINES.map((l) => (l.startsWith('#') ? `// ${l.slice(2)}` : `//   ${l}`));
