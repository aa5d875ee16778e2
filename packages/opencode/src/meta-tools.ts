import type {
  Broker,
  ListedMetaTool,
  MetaToolName,
  ToolCallResult,
} from '@heretek/broker';
import { isRoleName, type RoleName } from '@heretek/prefix';
import type { HeretekOptions } from './options.js';

/** A log line in OpenCode's log, under the service `heretek`. */
export type PluginLog = (
  level: 'info' | 'warn' | 'error',
  message: string,
) => void;

/**
 * The broker's meta-tools as `tools/list` shows them (`listedMetaTools()`
 * of `@heretek/broker`), read when this package is built (tsup's `define`)
 * and by the test runner (vitest's `define`): the definitions reach OpenCode
 * without loading the broker's code.
 */
declare const __HERETEK_META_TOOLS__: Readonly<
  Record<MetaToolName, ListedMetaTool>
>;

/** One meta-tool as both OpenCode lines register it. */
export type MetaTool = {
  name: MetaToolName;
  description: string;
  /** The JSON Schema the broker's stdio server lists. */
  inputSchema: Record<string, unknown>;
};

/**
 * The broker's three meta-tools as OpenCode tools: the one mapping from the
 * broker's definitions, shared by the V1 entry (`server()`) and the V2 entry
 * (`setup()`). The same definitions for every agent.
 */
export function metaToolList(): MetaTool[] {
  return (
    Object.entries(__HERETEK_META_TOOLS__) as Array<
      [MetaToolName, ListedMetaTool]
    >
  ).map(([name, definition]) => ({
    name,
    description: definition.description,
    inputSchema: definition.inputSchema,
  }));
}

/** What a meta-tool call gives OpenCode back. */
export type MetaToolAnswer = {
  /** `CODE` of a refusal, else `<tool> (<role>)`. */
  title: string;
  output: string;
  role?: RoleName;
  isError: boolean;
};

/** What the broker became when it was first needed: running, or why not. */
type BrokerState =
  | { ok: true; broker: Broker; defaultRole: RoleName }
  | { ok: false; code: string; message: string };

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

/** A refusal's code for an error the broker's start-up gave. */
const codeOf = (error: unknown) =>
  (error as { code?: unknown } | undefined)?.code;

/**
 * Starts the broker in-process from the environment through the broker's own
 * start-up path (`openBroker`, then `startBroker`: the index cache, the
 * gateway client, the pins file's check), as the stdio broker starts; never
 * throws. The broker's code is imported here, on the first meta-tool call,
 * not when OpenCode loads the plugin.
 */
async function startBroker(
  options: HeretekOptions,
  log: PluginLog,
): Promise<BrokerState> {
  try {
    const broker = await import('@heretek/broker');
    const setup = broker.readBrokerSetup({ env: options.env });
    const opened = await broker.openBroker({
      setup,
      log: (line) => log('info', `broker: ${line}`),
      deferGateway: true,
    });
    const problem = await broker.startBroker(opened);
    if (problem !== undefined) {
      await opened.broker.close();
      throw problem.error;
    }
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
    const code = codeOf(error);
    return {
      ok: false,
      code: typeof code === 'string' ? code : 'INVALID_CONFIG',
      message,
    };
  }
}

/** Answers meta-tool calls for one OpenCode instance, with one broker started on the first call. */
export type MetaToolRunner = {
  /**
   * Answers one call. `agent` is the calling agent's name as OpenCode passes
   * it to the tool (never anything the model writes): a role agent calls as
   * its role, any other agent as `HERETEK_BROKER_ROLE` (default `director`).
   */
  answer(call: {
    name: MetaToolName;
    input: unknown;
    agent: string;
    signal?: AbortSignal;
    onProgress?: (title: string) => void;
  }): Promise<MetaToolAnswer>;
  /** Closes the broker if it was started. */
  close(): Promise<void>;
};

/** A runner whose broker starts on the first call (the first search waits for discovery at most 1 s, as the stdio broker's does: the broker's own wait). */
export function createMetaToolRunner(
  options: HeretekOptions,
  log: PluginLog,
): MetaToolRunner {
  let started: Promise<BrokerState> | undefined;
  return {
    async answer(call) {
      const current = await (started ??= startBroker(options, log));
      if (!current.ok) {
        return {
          title: current.code,
          output: `${current.code}: ${current.message}`,
          isError: true,
        };
      }
      const role = isRoleName(call.agent) ? call.agent : current.defaultRole;
      const { answerMetaTool } = await import('@heretek/broker');
      const result = await answerMetaTool({
        broker: current.broker,
        name: call.name,
        input: call.input,
        role,
        ...(call.signal === undefined ? {} : { signal: call.signal }),
        onProgress: (progress) =>
          call.onProgress?.(
            `${progress.progress}${progress.total === undefined ? '' : `/${progress.total}`}${progress.message === undefined ? '' : ` ${progress.message}`}`,
          ),
      });
      const output = resultText(result);
      return {
        title: result.code ?? `${call.name} (${role})`,
        output,
        role,
        isError: result.isError === true,
      };
    },
    async close() {
      const current = await started;
      if (current?.ok === true) await current.broker.close();
    },
  };
}
