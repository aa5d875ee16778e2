// Test helpers: what a fixture server has received.
import { expect } from 'vitest';
import type { Listening } from './servers.js';

/**
 * Waits until a fixture server has received a request of `rpcMethod` (a
 * poll, generous for a loaded machine; it fails the test when none comes).
 */
export async function requestArrived(
  server: Listening,
  rpcMethod: string,
): Promise<void> {
  await expect
    .poll(() => server.requests.some((r) => r.rpcMethod === rpcMethod), {
      timeout: 10_000,
      interval: 20,
    })
    .toBe(true);
}

/** The requests of `rpcMethod` a fixture server has received, in order. */
export function requestsOf<R extends { rpcMethod?: string | undefined }>(
  server: { requests: readonly R[] },
  rpcMethod: string,
): R[] {
  return server.requests.filter((request) => request.rpcMethod === rpcMethod);
}
