/**
 * The operator's `reconcile` command (`npm run reconcile -- --from <block> [--to <block>]`):
 * prints the counts of the range as one JSON line; exits 1 with the reason on stderr on failure.
 */
import { runReconcileCommand } from './reconcileCommand.js';

try {
  console.log(JSON.stringify(await runReconcileCommand(process.argv.slice(2), process.env)));
  process.exit(0);
} catch (e) {
  console.error(`reconcile failed: ${(e as Error).message}`);
  process.exit(1);
}
