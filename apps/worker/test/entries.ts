import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { devPrivateKey, type DevStack } from '@acg/devnet';
import { ulid } from 'ulid';

/**
 * Starts a standalone entry (e.g. `../../gateway/src/main.ts`, resolved from this folder) in its
 * own Node process with the tsx loader and `env` over this process's environment, and resolves
 * once its output matches `ready`. Rejects with the output's tail if it exits first. Every child
 * is pushed onto `children` so the test can stop them all.
 */
export function startEntry(children: ChildProcess[], entry: string, env: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(entry, import.meta.url))], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (ready.test(out)) resolve(child);
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code, signal) => reject(new Error(`${entry} exited (${code ?? signal}): ${out.slice(-500)}`)));
  });
}

/**
 * The environment a standalone gateway or worker needs on `stack` (its Redis and payment chain,
 * dev accounts 0 and 1 as facilitator and treasury), under a fresh key prefix; probes off, logs silent.
 */
export function standaloneEnv(stack: DevStack): Record<string, string> {
  return {
    REDIS_URL: stack.redis.url,
    REDIS_KEY_PREFIX: `acg:test:${ulid()}:`,
    PAYMENT_RPC_URL: stack.payment.rpcUrl,
    PAY_TO_ADDRESS: stack.payment.treasury.address,
    FACILITATOR_PRIVATE_KEY: devPrivateKey(0),
    TREASURY_PRIVATE_KEY: devPrivateKey(1),
    PROBE_INTERVAL_SECONDS: '0',
    LOG_LEVEL: 'silent',
  };
}
