/**
 * The gateway target-name rule, as agentgateway applies it
 * (`validate_mcp_target_name`): 1 to 253 characters of lowercase letters,
 * digits, `-` and `.`. `_` is refused because agentgateway joins
 * `<target>_<tool>` and splits names at the first `_`; `+` is reserved.
 */
export const TARGET_NAME_PATTERN = /^[a-z0-9.-]+$/;

/** Longest target name agentgateway accepts. */
export const MAX_TARGET_NAME_LENGTH = 253;

/** What the rule asks for, to finish an error message. */
export const TARGET_NAME_RULE = `1-${MAX_TARGET_NAME_LENGTH} characters of lowercase letters, digits, '-' and '.' (as agentgateway requires)`;

/**
 * Why `name` is not a usable target name, or `undefined` when it is. Each
 * package wraps the reason in its own typed error.
 */
export function targetNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'it is not a string';
  if (name.length === 0) return 'it is empty';
  if (name.length > MAX_TARGET_NAME_LENGTH)
    return `it is ${name.length} characters long`;
  if (name.includes('_'))
    return "'_' is reserved: agentgateway joins <target>_<tool> and splits names at the first '_'";
  if (name.includes('+')) return "'+' is reserved by agentgateway";
  if (!TARGET_NAME_PATTERN.test(name))
    return 'it contains characters other than a-z, 0-9, - and .';
  return undefined;
}

/**
 * The name agentgateway gives a target's tool on its multiplexed route:
 * `<target>_<tool>`. The one place this name is spelled.
 */
export function multiplexedName(target: string, tool: string): string {
  return `${target}_${tool}`;
}

/**
 * Split a multiplexed tool name `<target>_<tool>` at the first `_`, as
 * agentgateway does. `undefined` when there is no `_`, either side is empty,
 * or the part before it is not a valid target name.
 */
export function splitMultiplexedName(
  name: string,
): { target: string; tool: string } | undefined {
  const index = name.indexOf('_');
  if (index <= 0 || index === name.length - 1) return undefined;
  const target = name.slice(0, index);
  if (targetNameProblem(target) !== undefined) return undefined;
  return { target, tool: name.slice(index + 1) };
}

/**
 * The routing modes of agentgateway: `per-target` (`<url>/mcp/<target>`, bare
 * tool names) and `multiplexed` (`<url>/mcp`, names `<target>_<tool>`).
 */
export const GATEWAY_MODES = ['per-target', 'multiplexed'] as const;

/** How the gateway routes to targets; one of {@link GATEWAY_MODES}. */
export type GatewayMode = (typeof GATEWAY_MODES)[number];
