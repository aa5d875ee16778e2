/**
 * The plugin's hook program, run by Claude Code as
 * `node heretek-hook.mjs <event> [roles folder]` with the event's JSON on
 * stdin:
 *
 * - `subagent-start`, `session-start`: a `heretek:<role>` agent gets its
 *   role's layers 3+4 (profile `HERETEK_BROKER_PROFILE`, else `core`) as
 *   `additionalContext`, after the system prompt its body (the frozen
 *   prefix, the same for all six) fills;
 * - `pre-tool-use` (every tool call): for `mcp_call_tool`, records the
 *   calling agent's role for the call's `tool_use_id` in the roles folder,
 *   where the broker reads it (the model writes the call's arguments, never
 *   this record); for Claude Code's own tools, denies a read-only role's
 *   call that would change the workspace (`HERETEK_READONLY_SHELL` says
 *   what its shell may run).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { ROLE_LAYERS_FILE } from './layout.js';
import { READ_ONLY_SHELL_VARIABLE } from '@heretek/prefix';
import {
  preToolUse,
  roleContext,
  type HookAnswer,
  type HookInput,
} from './hook-answers.js';
import type { RoleLayers } from './plugin-files.js';

function main(): number {
  const [event, directory] = process.argv.slice(2);
  const input = JSON.parse(readFileSync(0, 'utf8')) as HookInput;
  let answer: HookAnswer;
  if (event === 'subagent-start' || event === 'session-start') {
    const layers = JSON.parse(
      readFileSync(
        new URL(`./${basename(ROLE_LAYERS_FILE)}`, import.meta.url),
        'utf8',
      ),
    ) as RoleLayers;
    answer = roleContext({
      event,
      input,
      layers,
      profile: process.env.HERETEK_BROKER_PROFILE,
    });
  } else if (event === 'pre-tool-use' && directory !== undefined) {
    answer = preToolUse({
      input,
      directory,
      shellPolicy: process.env[READ_ONLY_SHELL_VARIABLE],
    });
  } else {
    answer = {
      code: 1,
      stderr: `heretek: unknown hook call ${JSON.stringify(process.argv.slice(2))}; expected subagent-start, session-start or pre-tool-use <folder>.\n`,
    };
  }
  if (answer.stdout !== undefined) process.stdout.write(answer.stdout);
  if (answer.stderr !== undefined) process.stderr.write(answer.stderr);
  return answer.code;
}

try {
  process.exitCode = main();
} catch (error) {
  process.stderr.write(`heretek hook: ${String(error)}\n`);
  process.exitCode = 1;
}
