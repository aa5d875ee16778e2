/**
 * Test fixture: what the end-to-end tests of both OpenCode lines share about
 * their runs: running them two at a time, a closed loopback port, and
 * reading the system blocks and the emulated Anthropic cache of the
 * requests the model stand-in recorded.
 */
import { createServer } from 'node:net';
import { ROLE_NAMES, type RoleName } from '@heretek/prefix';
import { getEncoding } from 'js-tiktoken';
import { emulateAnthropicCache } from '#broker-fixtures/anthropic-cache.js';
import type { RecordedRequest } from '#broker-fixtures/model-stand-in.js';
import type { OpenCodeRun } from './run-opencode.js';

/** `HERETEK_OPENCODE_E2E=0` skips the runs of OpenCode (CI's second Node version: OpenCode runs the plugin in its own Bun runtime). */
export const RUN_OPENCODE = process.env.HERETEK_OPENCODE_E2E !== '0';

/** One OpenCode run and the requests its model stand-in recorded. */
export type Outcome = { run: OpenCodeRun; requests: RecordedRequest[] };

/** An Anthropic system block. */
export type SystemBlock = {
  type: string;
  text: string;
  cache_control?: unknown;
};

/** The system blocks of an Anthropic request. */
export const systemOf = (request: RecordedRequest) =>
  (request.body.system ?? []) as SystemBlock[];

/** The role whose layer 3 heading starts one of a request's system blocks. */
export const roleOf = (request: RecordedRequest): RoleName | undefined =>
  ROLE_NAMES.find((role) =>
    systemOf(request).some((block) =>
      block.text.startsWith(`# Role: ${role}\n`),
    ),
  );

/** A port on 127.0.0.1 that nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve()),
  );
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Runs the jobs two at a time. */
export async function twoAtATime<T>(
  jobs: Array<() => Promise<T>>,
): Promise<T[]> {
  const results: T[] = new Array<T>(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      results[index] = await jobs[index]!();
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

const encoder = getEncoding('o200k_base');

/**
 * Anthropic's prompt cache emulated over the agent requests of one session
 * (the broker's fixture), tokens estimated with o200k_base: the share of its
 * input each role's first request reads from the cache, by role, in the
 * order the roles first appear.
 */
export function firstRequestReadShares(
  requests: RecordedRequest[],
): Map<RoleName, number> {
  const report = emulateAnthropicCache(
    requests.map((request) => request.body),
    { countTokens: (text) => encoder.encode(text).length },
  );
  const shares = new Map<RoleName, number>();
  requests.forEach((request, index) => {
    const role = roleOf(request);
    const cached = report.requests[index]!;
    if (role !== undefined && !shares.has(role))
      shares.set(role, cached.read / cached.input);
  });
  return shares;
}
