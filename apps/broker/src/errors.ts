import { createErrorFamily } from '@heretek/internal';

/**
 * Stable codes of {@link BrokerError}: every refusal an agent reads starts with one
 * (`CODE: message`). The package README's table of refusals says what each means.
 */
export const BrokerErrorCode = {
  UnknownTool: 'UNKNOWN_TOOL',
  UnknownTarget: 'UNKNOWN_TARGET',
  RoleForbidden: 'ROLE_FORBIDDEN',
  RoleUnverified: 'ROLE_UNVERIFIED',
  InvalidArguments: 'INVALID_ARGUMENTS',
  ToolChanged: 'TOOL_CHANGED',
  ToolNew: 'TOOL_NEW',
  ToolFlagged: 'TOOL_FLAGGED',
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

/** Quotes caller input for a message, capped at {@link MAX_ECHO_CHARS} characters and its length. */
export function quote(value: string, max = MAX_ECHO_CHARS): string {
  if (value.length <= max) return JSON.stringify(value);
  return `${JSON.stringify(value.slice(0, max))}… (${value.length} characters)`;
}
