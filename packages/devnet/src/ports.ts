import net from 'node:net';

/** Below the ephemeral ranges: Linux 32768-60999, macOS and Windows 49152-65535. */
const QUIET_PORTS = { from: 20_000, to: 32_767 };

/**
 * A currently free TCP port on `host`: a random port in 20000-32767 that can be bound now, so that
 * no port the OS hands out by itself (the local port of an outgoing connection, a listen on port 0)
 * takes it between now and when the caller binds it; after 50 ports found taken, one the OS picks
 * (listen on port 0, read it, close).
 *
 * The port is free when this resolves but not reserved: a caller that binds it later should retry
 * with a fresh port if the bind fails (`startAnvil` and `resolveRedis` do).
 *
 * @param host - Interface to probe (default `127.0.0.1`).
 * @returns A port number in 1..65535.
 * @throws {Error} If the OS refuses to listen (no free port, permission).
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = QUIET_PORTS.from + Math.floor(Math.random() * (QUIET_PORTS.to - QUIET_PORTS.from + 1));
    if (await isPortFree(port, host)) return port;
  }
  return osPort(host);
}

/** A port the OS picks as free on `host` (listen on port 0, read it, close). */
function osPort(host: string): Promise<number> {
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
