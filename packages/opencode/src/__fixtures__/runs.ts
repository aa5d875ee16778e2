/**
 * Test fixture: what the end-to-end tests of both OpenCode lines share about
 * their runs: running them two at a time, a closed loopback port, the
 * scripts of agents that try to change the workspace with OpenCode's own
 * tools, and reading the system blocks, the tool results and the emulated
 * Anthropic cache of the requests the model stand-in recorded.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ROLE_NAMES, type RoleName } from '@heretek/prefix';
import { getEncoding } from 'js-tiktoken';
import { emulateAnthropicCache } from '#broker-fixtures/anthropic-cache.js';
import {
  scriptLine,
  type RecordedRequest,
} from '#broker-fixtures/model-stand-in.js';
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

/** What the seed file of a workspace holds: a read-only role reads it and counts its bytes. */
export const SEED = 'seed text 42';

/** Writes the seed file into `folder`; returns `folder`. */
export function seedWorkspace(folder: string): string {
  writeFileSync(join(folder, 'seed.txt'), SEED);
  return folder;
}

/** The file an agent's attempt of `kind` writes in `folder` (`write`: the write tool, `shell`: a shell command). */
export const attempted = (
  folder: string,
  agent: string,
  kind: 'write' | 'shell',
) => join(folder, `${kind}-${agent}.txt`);

/**
 * The script lines of an agent that tries to change `folder` with an
 * OpenCode line's own tools: writing a file with `write`, then writing one
 * from the shell (`bash` in OpenCode 1, `shell` in OpenCode 2); with
 * `reads`, then reading the seed file and running a read-only command on it.
 */
export function workspaceScript(options: {
  line: 1 | 2;
  folder: string;
  agent: string;
  reads?: boolean;
}): string[] {
  const { line, folder, agent } = options;
  const path = line === 1 ? 'filePath' : 'path';
  const shell = (command: string) =>
    line === 1
      ? scriptLine('bash', { command, description: 'run a command' })
      : scriptLine('shell', { command });
  const seed = join(folder, 'seed.txt');
  return [
    scriptLine('write', {
      [path]: attempted(folder, agent, 'write'),
      content: agent,
    }),
    shell(`echo ${agent} > ${attempted(folder, agent, 'shell')}`),
    ...(options.reads === true
      ? [scriptLine('read', { [path]: seed }), shell(`cat ${seed} | wc -c`)]
      : []),
  ];
}

type Block = {
  type: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  text?: string;
};

/** A tool result's content as text: a string, or its text blocks joined. */
const resultText = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? (content as Block[]).map((block) => block.text ?? '').join('\n')
      : JSON.stringify(content);

/** Each tool call in an Anthropic request's messages, with the result the model received for it. */
export function callsWithResults(
  request: RecordedRequest,
): Array<{ name: string; input: unknown; result: string | undefined }> {
  const blocks = (
    (request.body.messages ?? []) as Array<{ content: unknown }>
  ).flatMap((m) => (Array.isArray(m.content) ? (m.content as Block[]) : []));
  const results = new Map(
    blocks
      .filter((b) => b.type === 'tool_result')
      .map((b) => [b.tool_use_id, resultText(b.content)]),
  );
  return blocks
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({
      name: b.name ?? '',
      input: b.input,
      result: results.get(b.id),
    }));
}

/** The tools a workspace script calls, in both lines. */
const SCRIPTED = new Set(['write', 'read', 'bash', 'shell']);

/**
 * The results of an agent's workspace script (see {@link workspaceScript}),
 * from the last of `requests` that made its write attempt: the write, the
 * shell write, then (when it ran them) the read and the read-only command;
 * the agent's later calls of other tools are left out.
 */
export function workspaceResults(
  requests: RecordedRequest[],
  folder: string,
  agent: string,
): Array<string | undefined> {
  const file = attempted(folder, agent, 'write');
  const isAttempt = (call: { name: string; input: unknown }) =>
    call.name === 'write' && JSON.stringify(call.input).includes(file);
  const calls = requests
    .map(callsWithResults)
    .filter((calls) => calls.some(isAttempt))
    .at(-1);
  if (calls === undefined)
    throw new Error(`no request carries the write attempt of ${agent}`);
  const start = calls.findIndex(isAttempt);
  const next = calls.slice(start + 1).findIndex((c) => !SCRIPTED.has(c.name));
  const end = next === -1 ? calls.length : start + 1 + next;
  return calls.slice(start, Math.min(end, start + 4)).map((c) => c.result);
}
