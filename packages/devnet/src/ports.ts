import net from 'node:net';

/**
 * Asks the OS for a currently free TCP port on `host` (listen on port 0, read it, close).
 *
 * The port is free when this resolves but not reserved: a caller that binds it later should retry
 * with a fresh port if the bind fails (`startAnvil` and `resolveRedis` do).
 *
 * @param host - Interface to probe (default `127.0.0.1`).
 * @returns A port number in 1..65535.
 * @throws {Error} If the OS refuses to listen (no free port, permission).
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('freePort: could not read the listening port'));
      });
    });
  });
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Whether nothing listens on `host:port` right now (tries to listen on it, then closes).
 *
 * @param port - TCP port, 1..65535.
 * @param host - Interface (default `127.0.0.1`).
 * @returns `true` if the port could be bound.
 */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
