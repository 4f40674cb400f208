/**
 * Import rules of the workspace (docs/architecture.md "Packages by role"), checked by
 * test/architecture.unit.test.ts through dependency-cruiser's API, and by hand with
 * `npx depcruise apps packages test bench`.
 *
 * - no-circular: no import circle, in an app, in a package or across packages. Type-only imports
 *   count (`tsPreCompilationDeps: true`): a circle of types is still two modules that cannot be read,
 *   moved or tested one without the other.
 * - no-package-imports-app: a file under packages/<name>/src imports nothing under apps/ (apps are
 *   composition roots; packages never call back up into them; a package's tests may start an app).
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import circle: move the shared type or constructor to a module both can import, or pass the dependency in (docs/architecture.md "Packages by role").',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-package-imports-app',
      severity: 'error',
      comment: 'A package imports an app: packages never reach up into apps (docs/architecture.md "Packages by role").',
      from: { path: '^packages/[^/]+/src/' },
      to: { path: '^apps/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/|\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
