/**
 * A counting semaphore with FIFO waiters. Hand-written: the client needs
 * `AbortSignal` cancellation of a queued waiter, which small limiter packages lack.
 */
export class Limiter {
  private active = 0;
  private readonly waiters: Array<{ grant: () => void }> = [];

  constructor(private readonly limit: number) {}

  /** Take a slot now if one is free (no waiter queued); otherwise `undefined`. */
  tryAcquire(): (() => void) | undefined {
    if (this.active >= this.limit || this.waiters.length > 0) return undefined;
    this.active += 1;
    return this.releaser();
  }

  /** Wait for a slot once {@link tryAcquire} found none; rejects with `signal.reason` on abort. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.active += 1;
          resolve(this.releaser());
        },
      };
      const onAbort = () => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      this.waiters.shift()?.grant();
    };
  }
}
