import { router } from '../trpc/init.js';
import { accountsRouter } from './accounts.js';
import { channelsRouter } from './channels.js';
import { discoveryRouter } from './discovery.js';
import { disputesRouter } from './disputes.js';
import { executeRouter } from './execute.js';
import { jobsRouter } from './jobs.js';
import { liquidationsRouter } from './liquidations.js';
import { providersRouter } from './providers.js';
import { quotesRouter } from './quotes.js';
import { trustRouter } from './trust.js';
import { walletMonitorRouter } from './walletMonitor.js';

/** The gateway's tRPC router: every procedure, served natively at /trpc and as REST by trpc-to-openapi. */
export const appRouter = router({
  discovery: discoveryRouter,
  accounts: accountsRouter,
  execute: executeRouter,
  jobs: jobsRouter,
  liquidations: liquidationsRouter,
  walletMonitor: walletMonitorRouter,
  disputes: disputesRouter,
  providers: providersRouter,
  quotes: quotesRouter,
  trust: trustRouter,
  channels: channelsRouter,
});

export type AppRouter = typeof appRouter;
