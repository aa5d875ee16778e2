// The OpenCode 2 entry: `setup(ctx)` registers through the plugin context
// what `server()` returns as hooks in OpenCode 1. Written against the
// OpenCode 2.1.2 binary the tests run (`@opencode/cli`, a devDependency);
// OpenCode 2's plugin types (`@opencode/plugin`) are not on the npm
// registry, so the parts of the context this file uses are written out
// below, as 2.1.2 has them (OpenCode's source, github.com/anomalyco/opencode:
// packages/plugin/src/host.ts, packages/schema/src/agent.ts, and the same
// code in the binary).
import { isRoleName, roleDescription, type RoleName } from '@heretek/prefix';
import {
  createMetaToolRunner,
  metaToolList,
  type MetaToolRunner,
  type PluginLog,
} from './meta-tools.js';
import { preparePlugin } from './prepare.js';
import { createReadOnlyGuard } from './read-only.js';
import type { RolePrompts } from './roles.js';

/** `Registration` of every `transform` and `hook` call. */
type Registration = { dispose: () => Promise<void> };

/** `Agent.Info`, the fields the plugin sets. */
export type AgentInfoV2 = {
  id: string;
  description?: string;
  mode: 'subagent' | 'primary' | 'all';
  system?: string;
};

/** The agent editor of `ctx.agent.transform`: `update` creates a missing agent from `Agent.Info.empty` (every tool allowed) and hands it to `edit`. */
export type AgentEditorV2 = {
  update(id: string, edit: (agent: AgentInfoV2) => void): void;
};

/** The context of a tool's `execute`: `agent` is the calling agent, set by OpenCode, not by the model. */
export type ToolContextV2 = {
  readonly sessionID: string;
  readonly agent: string;
  readonly signal: AbortSignal;
  readonly progress: (update: Record<string, unknown>) => Promise<void>;
};

/** What a tool's `execute` returns. */
export type ToolResultV2 = {
  content?: string;
  metadata?: Record<string, unknown>;
};

/** A tool as the tool editor's `add` takes it; `options.codemode: false` sends it to the model directly instead of behind Code Mode's `execute`. */
export type ToolInfoV2 = {
  name: string;
  description: string;
  /** A JSON Schema. */
  input: Record<string, unknown>;
  options?: { codemode: boolean };
  execute: (input: unknown, context: ToolContextV2) => Promise<ToolResultV2>;
};

/** The tool editor of `ctx.tool.transform`. */
export type ToolEditorV2 = { add(tool: ToolInfoV2): void };

/**
 * The input of `ctx.tool.hook("execute.before", ...)`: every tool call, the
 * calls a Code Mode script makes inside `execute` one by one. A callback
 * that throws refuses the call before it runs; the error's message is the
 * tool's result.
 */
export type ToolCallV2 = {
  readonly tool: string;
  readonly sessionID: string;
  /** The calling agent, set by OpenCode. */
  readonly agent: string;
  input: unknown;
};

/** A cache breakpoint after a system part or message part. */
type CacheHint = { type: 'ephemeral' | 'persistent'; ttlSeconds?: number };

/** A system part: `cache` marks a breakpoint after it. */
export type SystemPartV2 = {
  type: 'text';
  text: string;
  cache?: CacheHint;
};

/** A message as the `context` hook sees it: its parts take a `cache` hint too. */
export type MessageV2 = {
  role: string;
  content: Array<{ type: string; cache?: CacheHint }>;
};

/** The input of `ctx.session.hook("context", ...)`, changed in place. */
export type SessionContextV2 = {
  readonly sessionID: string;
  readonly agent: string;
  system: SystemPartV2[];
  messages: MessageV2[];
};

/** The input of `ctx.session.hook("http.request", ...)`: the request may be replaced. */
export type HttpRequestV2 = {
  readonly sessionID: string;
  readonly agent: string;
  request: Request;
};

/** The parts of OpenCode 2's plugin context the plugin uses. */
export type PluginContextV2 = {
  readonly options: unknown;
  readonly location: { readonly directory: string };
  readonly agent: {
    transform(callback: (editor: AgentEditorV2) => void): Promise<Registration>;
  };
  readonly tool: {
    transform(callback: (editor: ToolEditorV2) => void): Promise<Registration>;
    hook(
      name: 'execute.before',
      callback: (call: ToolCallV2) => Promise<void> | void,
    ): Promise<Registration>;
  };
  readonly session: {
    hook(
      name: 'context',
      callback: (input: SessionContextV2) => Promise<void> | void,
    ): Promise<Registration>;
    hook(
      name: 'http.request',
      callback: (input: HttpRequestV2) => Promise<void> | void,
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
 * The six role agents. OpenCode 2 applies the configuration's `agents`
 * after the plugins' agent transforms, field by field: an entry of the
 * user's named after a role is laid over the plugin's agent, and the fields
 * it sets win (its `system`, `model`, `mode`, ...). Every tool stays allowed
 * (`Agent.Info.empty`'s rules), so the tools of all six roles are the same.
 */
function addRoleAgentsV2(editor: AgentEditorV2, prompts: RolePrompts): void {
  for (const [role, prompt] of prompts.roles) {
    editor.update(role, (agent) => {
      agent.description = roleDescription(role);
      agent.mode = role === 'director' ? 'primary' : 'all';
      agent.system = prompt.prompt;
    });
  }
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

const BREAKPOINT: CacheHint = { type: 'ephemeral' };

/**
 * Puts a breakpoint after the latest message's last text part (its last
 * part, if none is text), where OpenCode's own Anthropic policy puts it, unless
 * a message part has one already. OpenCode spends at most four breakpoints
 * and fills the budget in the order tools, system, messages: with the two
 * the plugin sets in the system, the message's would be the one left out.
 */
function markLatestMessage(messages: MessageV2[]): void {
  if (messages.some((m) => m.content.some((part) => part.cache))) return;
  const content = messages.at(-1)?.content;
  if (content === undefined || content.length === 0) return;
  const text = content.findLastIndex((part) => part.type === 'text');
  content[text === -1 ? content.length - 1 : text]!.cache = BREAKPOINT;
}

/**
 * A role agent's system parts in prefix order: everything that is the same
 * for every role before the first byte that is not. OpenCode 2 sends the
 * agent's prompt first, then its own parts (model information, the Code
 * Mode catalog, a worktree note; the same for every role with the same model
 * and tools). The part that starts with the frozen prefix is split:
 *
 *   [frozen prefix (breakpoint), OpenCode's parts (breakpoint after the last), the role and its profile]
 *
 * Block 0 is a cache entry that every role reads whatever else differs;
 * the breakpoint after OpenCode's parts makes the whole shared system one
 * more, so a role's first request reads all of it from the entry another
 * role wrote. Returns whether it split.
 */
export function shapeRoleRequest(
  request: SessionContextV2,
  prompts: RolePrompts,
): boolean {
  const index = request.system.findIndex((part) =>
    part.text.startsWith(prompts.frozen),
  );
  if (index === -1) return false;
  const own = request.system[index]!;
  const rest = own.text.slice(prompts.frozen.length);
  const shared = request.system.filter((_, i) => i !== index);
  const last = shared.at(-1);
  if (last !== undefined) last.cache ??= BREAKPOINT;
  request.system.splice(
    0,
    request.system.length,
    { type: 'text', text: prompts.frozen, cache: BREAKPOINT },
    ...shared,
    ...(rest === '' ? [] : [{ type: 'text' as const, text: rest }]),
  );
  markLatestMessage(request.messages);
  return true;
}

/**
 * A role agent's HTTP request with the prompt cache key of the frozen
 * prefix instead of OpenCode's per-session one, when OpenCode sends one
 * (`prompt_cache_key` in a JSON body: OpenAI's APIs, and an
 * OpenAI-compatible provider that takes keys). Any other request is
 * returned as it is.
 */
export async function withPromptCacheKey(
  request: Request,
  key: string,
): Promise<Request> {
  if (!(request.headers.get('content-type') ?? '').includes('json'))
    return request;
  let body: unknown;
  try {
    body = JSON.parse(await request.clone().text());
  } catch {
    return request;
  }
  const fields = body as Record<string, unknown> | null;
  if (typeof fields?.prompt_cache_key !== 'string') return request;
  return new Request(request, {
    body: JSON.stringify({ ...fields, prompt_cache_key: key }),
  });
}

/** Writes a log line to OpenCode's stderr, prefixed `heretek`. */
const stderrLog: PluginLog = (level, message) => {
  process.stderr.write(`heretek ${level}: ${message}\n`);
};

/**
 * The six role agents and their hooks: the `context` hook shapes a role
 * agent's system parts and breakpoints, the `http.request` hook sets the
 * prompt cache key, and the tool hook refuses a read-only role's calls of
 * OpenCode's own tools that change the workspace.
 */
async function registerRoles(options: {
  context: PluginContextV2;
  prompts: RolePrompts;
  env: NodeJS.ProcessEnv;
  log: PluginLog;
}): Promise<void> {
  const { context, prompts, log } = options;
  await context.agent.transform((editor) => addRoleAgentsV2(editor, prompts));
  // The sessions whose latest request was shaped, with its agent: their
  // HTTP requests for that agent (not OpenCode's title requests) carry
  // the shared prompt cache key.
  const shaped = new Map<string, RoleName>();
  const ownPrompts = new Set<string>();
  await context.session.hook('context', (request) => {
    const role = request.agent;
    if (isRoleName(role) && shapeRoleRequest(request, prompts)) {
      shaped.set(request.sessionID, role);
      return;
    }
    shaped.delete(request.sessionID);
    if (isRoleName(role) && !ownPrompts.has(role)) {
      ownPrompts.add(role);
      log(
        'info',
        `agent ${role} has a system prompt of yours (agents.${role} in your OpenCode configuration): its requests go out as you wrote them, without the roles' shared prefix`,
      );
    }
  });
  await context.session.hook('http.request', async (input) => {
    if (shaped.get(input.sessionID) === input.agent)
      input.request = await withPromptCacheKey(
        input.request,
        prompts.promptCacheKey,
      );
  });
  // A role agent is the plugin's while its requests carry the plugin's
  // prompt: one with a system prompt of the user's is theirs.
  const guard = createReadOnlyGuard({
    harness: 'opencode-2',
    env: options.env,
    log,
  });
  await context.tool.hook('execute.before', (call) => {
    const role = shaped.get(call.sessionID);
    if (role === undefined || role !== call.agent) return;
    const refusal = guard({ role, tool: call.tool, input: call.input });
    if (refusal !== undefined) throw new Error(refusal);
  });
}

/**
 * OpenCode 2's `setup(ctx)`: the six role agents with their hooks (see
 * {@link registerRoles}) and the three meta-tools. Returns the cleanup that
 * closes the broker. In OpenCode 1's preview context it does nothing (see
 * {@link isOpenCode2}).
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
  if (prompts !== undefined)
    await registerRoles({ context, prompts, env: options.env, log });
  await context.tool.transform((editor) => {
    for (const tool of metaToolsV2(runner)) editor.add(tool);
  });
  return () => runner.close();
}
