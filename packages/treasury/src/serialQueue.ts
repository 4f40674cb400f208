/** Runs async steps one after another, in call order; a failed step does not stop the next. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(step: () => Promise<T>): Promise<T> {
    const result = this.tail.then(step, step);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
