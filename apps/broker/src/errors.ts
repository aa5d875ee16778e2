import { createErrorFamily } from '@heretek/internal';

/**
 * Stable codes of {@link BrokerError}. Every refusal the broker sends an agent
 * starts with one of them (`CODE: message`):
 * - `UNKNOWN_TOOL`: the name is not in the catalog (and cannot be passed through).
 * - `UNKNOWN_TARGET`: a search or browse named a backend target the broker does not know.
 * - `ROLE_FORBIDDEN`: a read-only role asked for a mutating (or unknown) tool.
 * - `ROLE_UNVERIFIED`: the broker takes each call's role from a Claude Code hook and none arrived; nothing was sent.
 * - `INVALID_ARGUMENTS`: the arguments fail the tool's JSON Schema, or a meta-tool's own; nothing was sent.
 * - `TOOL_CHANGED`: the tool's definition differs from its pin and the pin policy refuses the call (a mutating tool under `refuse`); nothing was sent.
 * - `TOOL_NEW`: the tool appeared on a backend after that backend's tools were pinned, nobody has accepted it (`--pin`), and the pin policy refuses the call (a mutating tool under `refuse`); nothing was sent.
 * - `NO_GATEWAY`: the broker runs offline; the call was checked but not sent.
 * - `CIRCUIT_OPEN`: the backend failed repeatedly and is paused.
 * - `BACKEND_FAILED`: the gateway or backend failed (timeout, HTTP, protocol, connection lost).
 * - `CANCELLED`: the caller cancelled the call, or the broker is shutting down; the gateway was told.
 * - `INVALID_CONFIG`: the broker's configuration cannot be used ({@link BrokerConfigError}).
 */
export const BrokerErrorCode = {
  UnknownTool: 'UNKNOWN_TOOL',
  UnknownTarget: 'UNKNOWN_TARGET',
  RoleForbidden: 'ROLE_FORBIDDEN',
  RoleUnverified: 'ROLE_UNVERIFIED',
  InvalidArguments: 'INVALID_ARGUMENTS',
  ToolChanged: 'TOOL_CHANGED',
  ToolNew: 'TOOL_NEW',
  NoGateway: 'NO_GATEWAY',
  CircuitOpen: 'CIRCUIT_OPEN',
  BackendFailed: 'BACKEND_FAILED',
  Cancelled: 'CANCELLED',
  InvalidConfig: 'INVALID_CONFIG',
} as const;

/** A refused or failed broker operation. The message is written for the calling agent. */
export class BrokerError extends createErrorFamily<typeof BrokerErrorCode>(
  'broker',
) {
  /** The tool the operation was about, when there is one. */
  readonly toolName: string | undefined;

  constructor(options: {
    code: BrokerErrorCode;
    message: string;
    toolName?: string;
    isRetryable?: boolean;
    cause?: unknown;
  }) {
    super(options);
    this.toolName = options.toolName;
  }
}

/** One of the {@link BrokerErrorCode} values. */
export type BrokerErrorCode = BrokerError['code'];

/** A configuration value that cannot be used; the message names the variable or flag and what to fix. */
export class BrokerConfigError extends BrokerError {
  /** One line per problem, each naming its variable or flag. */
  readonly issues: readonly string[];

  constructor(issues: readonly string[]) {
    super({
      code: 'INVALID_CONFIG',
      message: `Invalid broker configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`,
    });
    this.issues = issues;
  }
}

/** Longest piece of caller input quoted back in a message, in characters. */
export const MAX_ECHO_CHARS = 120;

/**
 * Quotes caller input for a message, capped: a 1 MiB query or tool name is
 * shown as its first {@link MAX_ECHO_CHARS} characters and its length, never whole.
 */
export function quote(value: string, max = MAX_ECHO_CHARS): string {
  if (value.length <= max) return JSON.stringify(value);
  return `${JSON.stringify(value.slice(0, max))}… (${value.length} characters)`;
}
