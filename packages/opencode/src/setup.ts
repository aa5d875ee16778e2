// The OpenCode 2 entry: `setup(ctx)` registers through the plugin context
// what `server()` returns as hooks in OpenCode 1. OpenCode 2 cannot be
// installed from the npm registry, so this is written to its documented
// contract: opencode.ai/v2/docs (build/plugins/server,
// build/plugins/migrate-v1, mcp-servers) and OpenCode's source,
// github.com/anomalyco/opencode at these commits:
//   packages/plugin/src/promise/plugin.ts    26b15a99d6549b57b57b9a8f22e7963898030a71 (Context)
//   packages/plugin/src/promise/agent.ts     2ebfbd8181dc0b9498e87a80223ce5eb8769dda3 (AgentEditor)
//   packages/plugin/src/promise/tool.ts      196e46122874caa1df7d28dab7a64f6fddf0730a (ToolEditor, ToolContext)
//   packages/plugin/src/promise/session.ts   03545fd3bb099af708c5f1146c42c10c7f24c359 (the "context" hook)
//   packages/schema/src/agent.ts             3ece701dadffc47e67a74291a4753069021287b9 (Agent.Info)
//   packages/schema/src/tool.ts              0f131b3e39f217d2a22efec1f6aa63a6c0767c97 (Tool.Info, Tool.Options.codemode)
// The types below are the parts of that contract this file uses, no more.
import { isRoleName, type RoleName } from '@heretek/prefix';
import {
  createMetaToolRunner,
  metaToolList,
  type MetaToolRunner,
  type PluginLog,
} from './meta-tools.js';
import { preparePlugin } from './prepare.js';
import { roleDescription, type RolePrompts } from './roles.js';

/** `Registration` of every `transform` and `hook` call. */
type Registration = { dispose: () => Promise<void> };

/** `Agent.Info` (packages/schema/src/agent.ts), the fields the plugin sets. */
export type AgentInfoV2 = {
  id: string;
  description?: string;
  mode: 'subagent' | 'primary' | 'all';
  hidden: boolean;
  system?: string;
  request: {
    settings: Record<string, unknown>;
    headers: Record<string, string>;
    body: Record<string, unknown>;
  };
  permissions: Array<{
    action: string;
    resource: string;
    effect: 'allow' | 'deny' | 'ask';
  }>;
};

/** `AgentEditor`, the argument of `ctx.agent.transform`: `update` creates a missing agent from `Agent.Info.empty`. */
export type AgentEditorV2 = {
  get(id: string): AgentInfoV2 | undefined;
  update(id: string, edit: (agent: AgentInfoV2) => void): void;
};

/** `ToolContext` of a tool's `execute`: `agent` is set by OpenCode, not by the model. */
export type ToolContextV2 = {
  readonly sessionID: string;
  readonly agent: string;
  readonly signal: AbortSignal;
  readonly progress: (update: Record<string, unknown>) => Promise<void>;
};

/** `Tool.Result`. */
export type ToolResultV2 = {
  content?: string;
  metadata?: Record<string, unknown>;
};

/** `Tool.Info` with the promise flavour's `execute`. */
export type ToolInfoV2 = {
  name: string;
  description: string;
  /** A JSON Schema is one of the `ValueSchema` forms. */
  input: Record<string, unknown>;
  options?: { codemode: boolean };
  execute: (input: unknown, context: ToolContextV2) => Promise<ToolResultV2>;
};

/** `ToolEditor`, the argument of `ctx.tool.transform`. */
export type ToolEditorV2 = { add(tool: ToolInfoV2): void };

/** `SystemPart` of OpenCode's LLM layer: `cache` marks a breakpoint after the part. */
export type SystemPartV2 = {
  type: 'text';
  text: string;
  cache?: { type: 'ephemeral' | 'persistent'; ttlSeconds?: number };
  metadata?: Record<string, unknown>;
};

/** `SessionContext`, the input of `ctx.session.hook("context", ...)`: mutated in place. */
export type SessionContextV2 = {
  readonly sessionID: string;
  readonly agent: string;
  readonly model: { providerID: string; id: string };
  system: SystemPartV2[];
  messages: unknown[];
  /** Generation settings; any other key is a provider option. */
  options: Record<string, unknown>;
  tools: Record<string, { description: string; input: unknown }>;
};

/** The parts of OpenCode 2's plugin `Context` the plugin uses. */
export type PluginContextV2 = {
  readonly options: unknown;
  readonly location: { readonly directory: string };
  readonly agent: {
    transform(callback: (editor: AgentEditorV2) => void): Promise<Registration>;
  };
  readonly tool: {
    transform(callback: (editor: ToolEditorV2) => void): Promise<Registration>;
  };
  readonly session: {
    hook(
      name: 'context',
      callback: (input: SessionContextV2) => Promise<void> | void,
    ): Promise<Registration>;
  };
};

/**
 * Whether `setup()` runs in OpenCode 2. OpenCode 1.18.29 and later call
 * `setup()` too, beside `server()`, with a preview context that has no
 * `tool` and no `session` domain: there `server()` registers everything and
 * `setup()` nothing, so nothing is registered twice.
 */
export function isOpenCode2(context: unknown): context is PluginContextV2 {
  const ctx = context as Partial<Record<string, Record<string, unknown>>>;
  return (
    typeof ctx?.tool?.transform === 'function' &&
    typeof ctx.session?.hook === 'function' &&
    typeof ctx.agent?.transform === 'function' &&
    typeof ctx.location?.directory === 'string'
  );
}

/**
 * The six role agents, except those the user defined (theirs win, with a log
 * line). The permissions are `Agent.Info.empty`'s; OpenCode 2 lists no todo
 * tool, so there is nothing to deny for identical tools across roles.
 */
function addRoleAgentsV2(
  editor: AgentEditorV2,
  prompts: RolePrompts,
  log: PluginLog,
): Set<RoleName> {
  const installed = new Set<RoleName>();
  for (const [role, prompt] of prompts.roles) {
    if (editor.get(role) !== undefined) {
      log(
        'info',
        `agent ${role} is defined in your OpenCode configuration: yours is used as you wrote it, the plugin's ${role} agent is not installed`,
      );
      continue;
    }
    editor.update(role, (agent) => {
      agent.description = roleDescription(role);
      agent.mode = role === 'director' ? 'primary' : 'all';
      agent.system = prompt.prompt;
    });
    installed.add(role);
  }
  return installed;
}

/** The meta-tools as OpenCode 2 tools, kept out of Code Mode so every agent sees them directly. */
function metaToolsV2(runner: MetaToolRunner): ToolInfoV2[] {
  return metaToolList().map((tool) => ({
    name: tool.name,
    description: tool.description,
    input: tool.inputSchema,
    options: { codemode: false },
    async execute(input, context) {
      const answer = await runner.answer({
        name: tool.name,
        input,
        agent: context.agent,
        signal: context.signal,
        onProgress: (title) => void context.progress({ title }).catch(() => {}),
      });
      return {
        content: answer.output,
        metadata: {
          title: answer.title,
          isError: answer.isError,
          ...(answer.role === undefined ? {} : { role: answer.role }),
        },
      };
    },
  }));
}

/**
 * For a role agent's request: the frozen prefix becomes system part 0 with a
 * cache breakpoint (split off the part that starts with it, moved first), and
 * the provider's prompt cache key becomes the prefix's (`promptCacheKey`, the
 * OpenAI option; other providers ignore it). Returns whether it split.
 */
export function shapeRoleRequest(
  request: SessionContextV2,
  prompts: RolePrompts,
): boolean {
  const index = request.system.findIndex((part) =>
    part.text.startsWith(prompts.frozen),
  );
  if (index === -1) return false;
  const part = request.system[index]!;
  const rest = part.text.slice(prompts.frozen.length);
  const frozen: SystemPartV2 = {
    type: 'text',
    text: prompts.frozen,
    cache: { type: 'ephemeral' },
  };
  request.system.splice(
    index,
    1,
    ...(rest === '' ? [] : [{ ...part, text: rest }]),
  );
  request.system.unshift(frozen);
  request.options.promptCacheKey = prompts.promptCacheKey;
  return true;
}

/** Writes a log line to OpenCode's stderr, prefixed `heretek`. */
const stderrLog: PluginLog = (level, message) => {
  process.stderr.write(`heretek ${level}: ${message}\n`);
};

/**
 * OpenCode 2's `setup(ctx)`: the six role agents, the three meta-tools and
 * the session hook that shapes each role agent's request. Returns the
 * cleanup that closes the broker. In OpenCode 1's preview context it does
 * nothing (see {@link isOpenCode2}).
 */
export async function setup(
  context: unknown,
): Promise<(() => Promise<void>) | void> {
  if (!isOpenCode2(context)) return;
  const log = stderrLog;
  const { options, prompts } = preparePlugin({
    rawOptions: context.options,
    directory: context.location.directory,
    log,
  });
  const runner = createMetaToolRunner(options, log);
  let installed = new Set<RoleName>();
  if (prompts !== undefined) {
    await context.agent.transform((editor) => {
      installed = addRoleAgentsV2(editor, prompts, log);
    });
    await context.session.hook('context', (request) => {
      if (isRoleName(request.agent) && installed.has(request.agent))
        shapeRoleRequest(request, prompts);
    });
  }
  await context.tool.transform((editor) => {
    for (const tool of metaToolsV2(runner)) editor.add(tool);
  });
  return () => runner.close();
}
