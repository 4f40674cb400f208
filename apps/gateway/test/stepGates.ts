/**
 * Job steps held per payer, for tests that act while a step runs (cancel halfway, cancel too
 * late): `hold(payer, index)` makes `payer`'s next job wait before step `index` (that step has
 * then started: the runner saved it `running`) until `release()`; `reached` resolves once it
 * waits there. `beforeStep` is the job runner hook that does it (`startWorker(config, {jobs: {beforeStep}})`).
 */
export function stepGates() {
  const held = new Map<string, { index: number; arrive: () => void; released: Promise<void> }>();
  return {
    hold(payer: string, index: number): { reached: Promise<void>; release: () => void } {
      let arrive: () => void = () => undefined;
      let release: () => void = () => undefined;
      const reached = new Promise<void>((r) => (arrive = r));
      const released = new Promise<void>((r) => (release = r));
      held.set(payer.toLowerCase(), { index, arrive: () => arrive(), released });
      return { reached, release: () => release() };
    },
    async beforeStep(job: { payer: string }, index: number): Promise<void> {
      const h = held.get(job.payer.toLowerCase());
      if (h && index === h.index) {
        h.arrive();
        await h.released;
      }
    },
  };
}
