/**
 * Polls `read` every 200 ms until `done` holds for its value, and returns that value; throws after
 * about 60 s (301 reads). Shared by the provider money, dispute and routing tests.
 */
export async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  for (let i = 0; ; i++) {
    const v = await read();
    if (done(v)) return v;
    if (i > 300) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 200));
  }
}
