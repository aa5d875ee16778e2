/**
 * Read-only roles are read-only in the harness too: which of a harness's own
 * tools leave the workspace as it is, and one decision for a role's call of
 * one of them. The plugins call {@link decideHarnessToolCall} before a tool
 * runs (Claude Code's `PreToolUse` hook, OpenCode's `tool.execute.before`)
 * and refuse the call when it says so; the tools list itself stays the same
 * for every role, so the cached prompt prefix does too.
 */
import { InvalidArgumentError } from './errors.js';
import { checkReadOnlyShellCommand } from './read-only-shell.js';
import { getRole, ROLE_NAMES, ROLES } from './roles.js';

/** The harnesses whose tools the rule knows. */
export const HARNESS_NAMES = [
  'claude-code',
  'opencode-1',
  'opencode-2',
] as const;

/** A harness: Claude Code, OpenCode 1 or OpenCode 2. */
export type HarnessName = (typeof HARNESS_NAMES)[number];

/**
 * What a harness tool does to the workspace:
 * - `read`: leaves it as it is (reading, searching, fetching, asking the user,
 *   loading a skill, keeping the session's to-do list, handing work to another
 *   agent, which is then checked as its own role);
 * - `write`: writes, edits, patches or deletes files, or runs code that can;
 * - `shell`: runs a shell command, given as the input's `command`; checked
 *   with the read-only shell policy.
 *
 * A tool not in a harness's table counts as `write`.
 */
export type HarnessToolEffect = 'read' | 'write' | 'shell';

/**
 * The harnesses' own tools, by name as the harness sends them to the model
 * (read from the requests of Claude Code 2.1.332, OpenCode 1.18.33 and
 * OpenCode 2.1.2). Tools the plugins add (the broker's meta-tools) are not
 * here: the broker gates each of their calls by role itself.
 */
export const HARNESS_TOOLS: Readonly<
  Record<HarnessName, Readonly<Record<string, HarnessToolEffect>>>
> = Object.freeze({
  'claude-code': Object.freeze({
    Write: 'write',
    Edit: 'write',
    MultiEdit: 'write',
    NotebookEdit: 'write',
    Bash: 'shell',
    Read: 'read',
    Glob: 'read',
    Grep: 'read',
    LS: 'read',
    NotebookRead: 'read',
    WebFetch: 'read',
    WebSearch: 'read',
    ToolSearch: 'read',
    Skill: 'read',
    Agent: 'read',
    Task: 'read',
    ListAgents: 'read',
    SendMessage: 'read',
    TodoWrite: 'read',
    BashOutput: 'read',
    TaskOutput: 'read',
    AskUserQuestion: 'read',
    ReportFindings: 'read',
  }),
  'opencode-1': Object.freeze({
    write: 'write',
    edit: 'write',
    multiedit: 'write',
    patch: 'write',
    apply_patch: 'write',
    bash: 'shell',
    read: 'read',
    glob: 'read',
    grep: 'read',
    list: 'read',
    lsp: 'read',
    webfetch: 'read',
    websearch: 'read',
    codesearch: 'read',
    question: 'read',
    skill: 'read',
    task: 'read',
    todowrite: 'read',
    todoread: 'read',
    invalid: 'read',
  }),
  'opencode-2': Object.freeze({
    write: 'write',
    edit: 'write',
    patch: 'write',
    // Code Mode: runs a script. OpenCode 2.1.2 passes each tool call the
    // script makes through the plugins' `execute.before` hook (and every
    // tool behind Code Mode is unknown here), but not the script's `fetch`,
    // which sends any request anywhere.
    execute: 'write',
    shell: 'shell',
    read: 'read',
    glob: 'read',
    grep: 'read',
    webfetch: 'read',
    websearch: 'read',
    question: 'read',
    skill: 'read',
    subagent: 'read',
  }),
});

/** What the shell runs for a read-only role. */
export const READ_ONLY_SHELL_POLICIES = [
  'allow-list',
  'refuse',
  'allow',
] as const;

/**
 * - `allow-list` (the default): only commands that only read (see
 *   `READ_ONLY_COMMANDS`), with no redirection, expansion or subshell;
 * - `refuse`: no shell command at all;
 * - `allow`: any command (the role's files stay safe from the write tools,
 *   not from the shell).
 */
export type ReadOnlyShellPolicy = (typeof READ_ONLY_SHELL_POLICIES)[number];

/** The environment variable the plugins read the shell policy from. */
export const READ_ONLY_SHELL_VARIABLE = 'HERETEK_READONLY_SHELL';

/**
 * The shell policy named by `value` (the variable's value): unset or empty
 * is `allow-list`. Throws `InvalidArgumentError` naming the variable and the
 * values it takes.
 */
export function parseReadOnlyShellPolicy(
  value: string | undefined,
): ReadOnlyShellPolicy {
  if (value === undefined || value === '') return 'allow-list';
  if ((READ_ONLY_SHELL_POLICIES as readonly string[]).includes(value))
    return value as ReadOnlyShellPolicy;
  throw new InvalidArgumentError({
    argument: READ_ONLY_SHELL_VARIABLE,
    message: `${READ_ONLY_SHELL_VARIABLE}=${JSON.stringify(value)} is not a shell policy: set it to ${READ_ONLY_SHELL_POLICIES.join(', ')} (unset means allow-list), then restart the harness.`,
  });
}

/** The decision on one harness tool call. */
export type HarnessToolDecision =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      /** Always `ROLE_FORBIDDEN`, the broker's code for the same refusal. */
      readonly code: 'ROLE_FORBIDDEN';
      /** What the model reads: the role, what was refused, and how to hand the change over. */
      readonly message: string;
    };

/** Options of {@link decideHarnessToolCall}. */
export type HarnessToolCall = {
  /** The harness whose tool table applies. */
  readonly harness: HarnessName;
  /** The calling agent's role; anything but the six roles throws `UnknownRoleError`. */
  readonly role: string;
  /** The tool's name as the harness gives it to the hook. */
  readonly tool: string;
  /** The call's input; a shell tool's command is its `command`. */
  readonly input: unknown;
  /** The shell policy for read-only roles (default `allow-list`). */
  readonly shellPolicy?: ReadOnlyShellPolicy;
};

const ALLOWED: HarnessToolDecision = Object.freeze({ allowed: true });

/** The writer roles, as the refusal names them. */
function writerRoles(): string {
  const writers = ROLE_NAMES.filter((name) => !ROLES[name].readOnly);
  return `${writers.slice(0, -1).join(', ')} or ${writers.at(-1)}`;
}

/** How to hand a change over, for the refusals. */
function handOver(subject: string): string {
  return `hand ${subject} to a writer role (${writerRoles()}) in a handoff envelope with intent "mutating", whose task says what to do with acceptance criteria, whose contextSummary gives the files and the exact change, and whose artifacts carry their digests.`;
}

function refusal(
  role: string,
  what: string,
  next: string,
): HarnessToolDecision {
  return {
    allowed: false,
    code: 'ROLE_FORBIDDEN',
    message: `Role "${role}" is read-only: ${what}. Nothing ran. ${next}`,
  };
}

/** The command of a shell tool's input, if it has one. */
function commandOf(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const command = (input as { command?: unknown }).command;
  return typeof command === 'string' ? command : undefined;
}

function shellDecision(
  role: string,
  tool: string,
  input: unknown,
  policy: ReadOnlyShellPolicy,
): HarnessToolDecision {
  if (policy === 'allow') return ALLOWED;
  if (policy === 'refuse')
    return refusal(
      role,
      `the shell (${tool}) is closed to read-only roles here`,
      `Read files with the reading tools; for a command that must run, ${handOver('it')}`,
    );
  const command = commandOf(input);
  const check =
    command === undefined
      ? {
          allowed: false as const,
          reason: 'this call has no command text to check',
        }
      : checkReadOnlyShellCommand(command);
  if (check.allowed) return ALLOWED;
  return refusal(
    role,
    `${tool} runs only read-only commands for it, and ${check.reason}`,
    `If the command only reads, write it with the read-only commands your permissions list, without redirection, \`$\` or subshells; if it changes anything or runs tests or builds, ${handOver('it')}`,
  );
}

/**
 * Whether `role` may make this call of a harness's own tool. Writer roles
 * may make any; a read-only role (director, qa-adversary) may call the
 * table's `read` tools, the shell as `shellPolicy` says, and nothing else:
 * `write` tools and tools the table does not know are refused, with a
 * message that names the role and says how to hand the change over.
 *
 * Call it for the harness's tools only: the broker's meta-tools are gated by
 * the broker. Throws `UnknownRoleError` for a role outside the six, and
 * `InvalidArgumentError` for an unknown harness.
 *
 * @example
 * decideHarnessToolCall({ harness: 'claude-code', role: 'director', tool: 'Write', input: { file_path: '/x', content: '' } });
 * // { allowed: false, code: 'ROLE_FORBIDDEN', message: 'Role "director" is read-only: Write changes files ...' }
 */
export function decideHarnessToolCall(
  call: HarnessToolCall,
): HarnessToolDecision {
  const { harness, role, tool, input, shellPolicy = 'allow-list' } = call;
  const definition = getRole(role);
  if (!(HARNESS_NAMES as readonly string[]).includes(harness))
    throw new InvalidArgumentError({
      argument: 'harness',
      message: `Unknown harness ${JSON.stringify(harness)}: expected one of ${HARNESS_NAMES.join(', ')}.`,
    });
  if (!definition.readOnly) return ALLOWED;
  const table = HARNESS_TOOLS[harness];
  const effect = Object.hasOwn(table, tool) ? table[tool] : undefined;
  if (effect === 'read') return ALLOWED;
  if (effect === 'shell')
    return shellDecision(definition.name, tool, input, shellPolicy);
  return refusal(
    definition.name,
    effect === 'write'
      ? `${tool} changes files`
      : `${tool} is not known to leave the workspace unchanged, so it counts as changing it`,
    `Do not look for another way to make the change: ${handOver('it')}`,
  );
}
