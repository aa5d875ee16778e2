import {
  META_TOOLS,
  answerMetaTool,
  openBroker,
  readBrokerSetup,
  type Broker,
  type MetaToolName,
  type ToolCallResult,
} from '@heretek/broker';
import { isRoleName, type RoleName } from '@heretek/prefix';
import type {
  Config,
  Hooks,
  PluginInput,
  PluginOptions,
  ToolContext,
  ToolDefinition,
} from '@opencode-ai/plugin';
import { z } from 'zod';
import { parsePluginOptions, type HeretekOptions } from './options.js';
import { loadRolePrompts, roleDescription, type RolePrompts } from './roles.js';

/** A log line in OpenCode's log, under the service `heretek`. */
export type PluginLog = (
  level: 'info' | 'warn' | 'error',
  message: string,
) => void;

/** What the broker became at start-up: running, or why not. */
type BrokerState =
  | { ok: true; broker: Broker; defaultRole: RoleName }
  | { ok: false; code: string; message: string };

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
 * Splits OpenCode's first system block at the end of the frozen prefix when
 * it starts with it, so the frozen prefix stands as block 0 with a cache
 * breakpoint of its own (OpenCode marks the first two system blocks). Any
 * other system prompt is left as it is. Returns whether it split.
 */
export function splitFrozenPrefix(system: string[], frozen: string): boolean {
  const first = system[0];
  if (
    first === undefined ||
    first.length <= frozen.length ||
    !first.startsWith(frozen)
  )
    return false;
  system.splice(0, 1, frozen, first.slice(frozen.length));
  return true;
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

/** The text OpenCode gives the model for a meta-tool's result. */
export function resultText(result: ToolCallResult): string {
  const parts = result.content.map((item) => {
    const part = item as { type?: unknown; text?: unknown };
    return part.type === 'text' && typeof part.text === 'string'
      ? part.text
      : JSON.stringify(item);
  });
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  return parts.join('\n');
}

/** The meta-tool's zod shape, read from the broker's own JSON Schema (one source). */
function argsOf(name: MetaToolName): ToolDefinition['args'] {
  const schema = z.fromJSONSchema(
    META_TOOLS[name].inputSchema as unknown as Parameters<
      typeof z.fromJSONSchema
    >[0],
  );
  // OpenCode turns the shape into JSON Schema with its own zod 4 copy.
  return (schema as unknown as z.ZodObject).shape as never;
}

/**
 * The three meta-tools as OpenCode tools: the same definitions for every
 * agent. Each call is gated by the calling agent's role, which OpenCode puts
 * in the tool context (the model cannot write it): a role agent gets its
 * role, any other agent `HERETEK_BROKER_ROLE` (default `director`,
 * read-only).
 */
export function metaTools(
  state: () => Promise<BrokerState>,
): Record<MetaToolName, ToolDefinition> {
  const make = (name: MetaToolName): ToolDefinition => ({
    description: META_TOOLS[name].description,
    args: argsOf(name),
    async execute(args: unknown, context: ToolContext) {
      const current = await state();
      if (!current.ok) {
        return {
          title: current.code,
          output: `${current.code}: ${current.message}`,
          metadata: { isError: true },
        };
      }
      const role = isRoleName(context.agent)
        ? context.agent
        : current.defaultRole;
      const result = await answerMetaTool({
        broker: current.broker,
        name,
        input: args,
        role,
        signal: context.abort,
        onProgress: (progress) =>
          context.metadata({
            title: `${progress.progress}${progress.total === undefined ? '' : `/${progress.total}`}${progress.message === undefined ? '' : ` ${progress.message}`}`,
          }),
      });
      const output = resultText(result);
      const code =
        result.isError === true ? /^([A-Z_]+): /.exec(output)?.[1] : undefined;
      return {
        title: code ?? `${name} (${role})`,
        output,
        metadata: { role, isError: result.isError === true },
      };
    },
  });
  return {
    mcp_search_tools: make('mcp_search_tools'),
    mcp_inspect_schema: make('mcp_inspect_schema'),
    mcp_call_tool: make('mcp_call_tool'),
  };
}

/** Starts the broker in-process from the environment; never throws. */
async function startBroker(
  options: HeretekOptions,
  log: PluginLog,
): Promise<BrokerState> {
  try {
    const setup = readBrokerSetup({ env: options.env });
    const opened = await openBroker({
      setup,
      log: (line) => log('info', `broker: ${line}`),
    });
    opened.broker.start();
    opened.learning
      .load()
      .catch((error: unknown) =>
        log('warn', `broker: usage not loaded: ${String(error)}`),
      );
    log(
      'info',
      `broker: ${opened.broker.catalog.size} tools from ${setup.backends.length} backends; ${
        setup.config.offline
          ? 'offline (HERETEK_BROKER_OFFLINE=1)'
          : `gateway ${setup.config.gatewayUrl} (${setup.config.gatewayMode})`
      }; agents that are not roles call as ${setup.config.role}`,
    );
    return { ok: true, broker: opened.broker, defaultRole: setup.config.role };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log(
      'error',
      `broker not started, every meta-tool call is refused until this is fixed and OpenCode restarted: ${message}`,
    );
    return {
      ok: false,
      code: (error as { code?: string }).code ?? 'INVALID_CONFIG',
      message,
    };
  }
}

/**
 * The plugin: six role agents whose requests share one cached prefix (system
 * block 0 = layers 1+2 of `@heretek/prefix`, a prompt cache key from its
 * SHA-256), and the broker's three meta-tools, identical for every agent and
 * gated by each agent's own role.
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
  let options: HeretekOptions;
  let prompts: RolePrompts | undefined;
  try {
    options = parsePluginOptions(rawOptions, process.env);
  } catch (error) {
    log('error', (error as Error).message);
    options = parsePluginOptions(undefined, process.env, { lenient: true });
  }
  try {
    prompts = loadRolePrompts({
      directory: input.directory,
      profile: options.profile,
    });
  } catch (error) {
    log(
      'error',
      `role agents not installed: ${(error as Error).message}. Fix it and restart OpenCode.`,
    );
  }
  let installed = new Set<RoleName>();
  let broker: Promise<BrokerState> | undefined;
  const state = () => (broker ??= startBroker(options, log));
  // Started now, so discovery runs while the user types.
  void state();

  return {
    config: async (config) => {
      if (prompts === undefined) return;
      installed = addRoleAgents({ config, prompts, log });
    },
    tool: metaTools(state),
    'experimental.chat.system.transform': async (_input, output) => {
      if (prompts !== undefined)
        splitFrozenPrefix(output.system, prompts.frozen);
    },
    'chat.params': async (params, output) => {
      if (prompts === undefined || !isRoleName(params.agent)) return;
      if (!installed.has(params.agent)) return;
      setPromptCacheKey({
        npm: params.model.api.npm,
        providerID: params.model.providerID,
        options: output.options,
        key: prompts.promptCacheKey,
      });
    },
    dispose: async () => {
      const current = await broker;
      if (current?.ok === true) await current.broker.close();
    },
  };
}
