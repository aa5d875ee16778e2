/**
 * Waits until `ready` holds, checking every `everyMs`. With `timeoutMs` it
 * throws once that time has passed; without, the test's own timeout bounds
 * the wait.
 */
export async function until(
  ready: () => boolean | Promise<boolean>,
  { everyMs = 20, timeoutMs }: { everyMs?: number; timeoutMs?: number } = {},
): Promise<void> {
  const deadline =
    timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) {
      throw new Error(`not ready after ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
