/**
 * @acg/env: the environment variables of every entry point (`npm start`, the standalone gateway,
 * builder and worker), validated with zod in one pass before anything boots, plus the preflight
 * checks that need the network (port free, Redis reachable). Every problem is reported at once,
 * one line per variable, naming it.
 */
export * from './env.js';
export * from './preflight.js';
export * from './process.js';
export * from './service.js';
export * from './reference.js';
