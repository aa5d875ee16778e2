import type { MetaToolName } from '@heretek/broker';
import { isRoleName, roleDescription, type RoleName } from '@heretek/prefix';
import type {
  Config,
  Hooks,
  PluginInput,
  PluginOptions,
  ToolContext,
  ToolDefinition,
} from '@opencode-ai/plugin';
import { z } from 'zod';
import {
  createMetaToolRunner,
  metaToolList,
  type MetaTool,
  type MetaToolRunner,
  type PluginLog,
} from './meta-tools.js';
import { preparePlugin } from './prepare.js';
import { createReadOnlyGuard } from './read-only.js';
import type { RolePrompts } from './roles.js';

/**
 * The agents the plugin adds to OpenCode's configuration: the six roles,
 * except those the user already defined (theirs win, with a log line).
 * `director` is OpenCode's primary agent for planning; the other roles are
 * `mode: "all"`, so the task tool reaches them and they can be picked as
 * primary agents too. A subagent-only mode would drop OpenCode's `task` and
 * `todowrite` tools from their requests, and the tools array would then
 * differ from director's and break the shared cached prefix.
 */
export function addRoleAgents(options: {
  config: Config;
  prompts: RolePrompts;
  log: PluginLog;
}): Set<RoleName> {
  const { config, prompts, log } = options;
  const agents = (config.agent ??= {}) as Record<string, unknown>;
  const installed = new Set<RoleName>();
  for (const [role, prompt] of prompts.roles) {
    if (agents[role] !== undefined) {
      log(
        'info',
        `agent ${role} is defined in your OpenCode configuration: yours is used as you wrote it, the plugin's ${role} agent is not installed`,
      );
      continue;
    }
    agents[role] = {
      description: roleDescription(role),
      mode: role === 'director' ? 'primary' : 'all',
      prompt: prompt.prompt,
      permission: { task: 'allow', todowrite: 'deny' },
    };
    installed.add(role);
  }
  return installed;
}

/**
 * Lays OpenCode 1's system prompt out so that everything the roles share
 * comes first. OpenCode sends one block: the agent's prompt, then its own
 * parts joined with newlines (model and environment, skills, MCP servers'
 * instructions), and marks the first two system blocks for the cache. A
 * role agent's block becomes
 *
 *   [frozen prefix, OpenCode's parts, the role and its profile]
 *
 * so a role's first request reads both marked blocks from what the roles
 * before it wrote, and only its own layers 3+4 and the task are new. Any
 * other system prompt (a user's agent, OpenCode's title request) is left as
 * it is.
 */
function layOutSystem(system: string[], prompts: RolePrompts): void {
  const first = system[0];
  const own = [...prompts.roles.values()].find(
    (prompt) =>
      first?.startsWith(prompt.prompt) &&
      [undefined, '\n'].includes(first[prompt.prompt.length]),
  );
  if (first === undefined || own === undefined) return;
  const parts = first.slice(own.prompt.length + 1);
  system.splice(
    0,
    1,
    ...[prompts.frozen, parts, own.rest].filter((text) => text !== ''),
  );
}

/**
 * Keys the provider's prompt cache by the frozen prefix instead of the
 * session: OpenAI's SDK takes `promptCacheKey` (OpenCode sets it to the
 * session id), an OpenAI-compatible SDK passes `prompt_cache_key` through
 * to the request body. Other providers are left alone (Anthropic caches by
 * breakpoints, not keys). Returns whether a key was set.
 */
export function setPromptCacheKey(options: {
  npm: string;
  providerID: string;
  options: Record<string, unknown>;
  key: string;
}): boolean {
  if (options.npm === '@ai-sdk/openai' || options.providerID === 'openai') {
    options.options.promptCacheKey = options.key;
    return true;
  }
  if (options.npm === '@ai-sdk/openai-compatible') {
    options.options.prompt_cache_key = options.key;
    return true;
  }
  return false;
}

/** A meta-tool's zod shape for OpenCode 1's `tool` hook, read from the broker's JSON Schema. */
function argsOf(tool: MetaTool): ToolDefinition['args'] {
  const schema = z.fromJSONSchema(
    tool.inputSchema as Parameters<typeof z.fromJSONSchema>[0],
  );
  // OpenCode turns the shape into JSON Schema with its own zod 4 copy.
  return (schema as unknown as z.ZodObject).shape as never;
}

/**
 * The three meta-tools as OpenCode 1 tools (the `tool` hook). Each call is
 * gated by the calling agent's role, which OpenCode puts in the tool context
 * (the model cannot write it).
 */
export function metaToolsV1(
  runner: MetaToolRunner,
): Record<MetaToolName, ToolDefinition> {
  const tools = {} as Record<MetaToolName, ToolDefinition>;
  for (const tool of metaToolList()) {
    tools[tool.name] = {
      description: tool.description,
      args: argsOf(tool),
      async execute(args: unknown, context: ToolContext) {
        const answer = await runner.answer({
          name: tool.name,
          input: args,
          agent: context.agent,
          signal: context.abort,
          onProgress: (title) => context.metadata({ title }),
        });
        return {
          title: answer.title,
          output: answer.output,
          metadata:
            answer.role === undefined
              ? { isError: answer.isError }
              : { role: answer.role, isError: answer.isError },
        };
      },
    };
  }
  return tools;
}

/**
 * The plugin: six role agents whose requests share one cached prefix (system
 * block 0 = layers 1+2 of `@heretek/prefix`, a prompt cache key from its
 * SHA-256), and the broker's three meta-tools, identical for every agent and
 * gated by each agent's own role. The read-only roles' calls of OpenCode's
 * own tools that change the workspace are refused before they run.
 */
export async function heretekPlugin(
  input: PluginInput,
  rawOptions?: PluginOptions,
): Promise<Hooks> {
  const log: PluginLog = (level, message) => {
    void Promise.resolve()
      .then(() =>
        input.client.app.log({
          body: { service: 'heretek', level, message },
        }),
      )
      .catch(() => {});
  };
  const { options, prompts } = preparePlugin({
    rawOptions,
    directory: input.directory,
    log,
  });
  let installed = new Set<RoleName>();
  // The sessions whose current turn is one of the plugin's role agents',
  // with its role: `tool.execute.before` carries the session, not the agent.
  const sessionRoles = new Map<string, RoleName>();
  const guard = createReadOnlyGuard({
    harness: 'opencode-1',
    env: options.env,
    log,
  });
  // The broker starts on the first meta-tool call: loading the plugin does
  // no work beyond the role prompts.
  const runner = createMetaToolRunner(options, log);

  return {
    config: async (config) => {
      if (prompts === undefined) return;
      installed = addRoleAgents({ config, prompts, log });
    },
    tool: metaToolsV1(runner),
    'experimental.chat.system.transform': async (_input, output) => {
      if (prompts !== undefined) layOutSystem(output.system, prompts);
    },
    'chat.params': async (params, output) => {
      // The turn's agent, as OpenCode 1 runs the turn's tools: the user
      // message's. `params.agent` is the request's own, which differs for
      // the title and compaction requests OpenCode makes in the same session
      // (the title one while the turn's first request is under way).
      const turn = params.message.agent;
      if (isRoleName(turn) && installed.has(turn))
        sessionRoles.set(params.sessionID, turn);
      else sessionRoles.delete(params.sessionID);
      if (
        prompts === undefined ||
        !isRoleName(params.agent) ||
        !installed.has(params.agent)
      )
        return;
      setPromptCacheKey({
        npm: params.model.api.npm,
        providerID: params.model.providerID,
        options: output.options,
        key: prompts.promptCacheKey,
      });
    },
    // Throwing refuses the call: OpenCode 1 gives the model the message as
    // the tool's result, and the tool does not run.
    'tool.execute.before': async (call, output) => {
      const role = sessionRoles.get(call.sessionID);
      if (role === undefined) return;
      const refusal = guard({ role, tool: call.tool, input: output.args });
      if (refusal !== undefined) throw new Error(refusal);
    },
    dispose: () => runner.close(),
  };
}
