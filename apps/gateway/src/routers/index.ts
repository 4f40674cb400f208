import { router } from '../trpc/init.js';
import { accountsRouter } from './accounts.js';
import { discoveryRouter } from './discovery.js';
import { executeRouter } from './execute.js';

/** The gateway's tRPC router: every procedure, served natively at /trpc and as REST by trpc-to-openapi. */
export const appRouter = router({
  discovery: discoveryRouter,
  accounts: accountsRouter,
  execute: executeRouter,
});

export type AppRouter = typeof appRouter;
