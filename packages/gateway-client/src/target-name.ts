import { GatewayConfigError, GatewayErrorCode } from './errors.js';

const TARGET_NAME = /^[a-z0-9.-]+$/;

/** Longest target name agentgateway accepts. */
export const MAX_TARGET_NAME_LENGTH = 253;

/**
 * Check a target name the way agentgateway does (`validate_mcp_target_name`):
 * 1 to 253 characters of lowercase letters, digits, `-` and `.`. `_` is
 * rejected because agentgateway joins `<target>_<tool>` and splits at the
 * first `_`; `+` is reserved as well.
 *
 * @returns the name, unchanged, when it is valid.
 * @throws {GatewayConfigError} with code `INVALID_TARGET_NAME` otherwise.
 *
 * @example
 * ```ts
 * validateTargetName('ghidra'); // 'ghidra'
 * validateTargetName('my_server'); // throws: '_' is reserved
 * ```
 */
export function validateTargetName(name: string): string {
  const fail = (why: string): never => {
    throw new GatewayConfigError({
      code: GatewayErrorCode.InvalidTargetName,
      setting: 'target',
      target: name,
      message: `Invalid target name ${JSON.stringify(name)}: ${why}. Use 1-${MAX_TARGET_NAME_LENGTH} characters of lowercase letters, digits, '-' and '.' (as agentgateway requires).`,
    });
  };
  if (typeof name !== 'string' || name.length === 0) return fail('it is empty');
  if (name.length > MAX_TARGET_NAME_LENGTH)
    return fail(`it is ${name.length} characters long`);
  if (name.includes('_'))
    return fail(
      "'_' is reserved: agentgateway joins <target>_<tool> and splits names at the first '_'",
    );
  if (name.includes('+')) return fail("'+' is reserved by agentgateway");
  if (!TARGET_NAME.test(name))
    return fail('it contains characters other than a-z, 0-9, - and .');
  return name;
}

/**
 * Split a multiplexed tool name `<target>_<tool>` at the first `_`, as
 * agentgateway does. Returns `undefined` when the name has no `_` or the
 * part before it is not a valid target name.
 */
export function splitMultiplexedName(
  name: string,
): { target: string; tool: string } | undefined {
  const index = name.indexOf('_');
  if (index <= 0 || index === name.length - 1) return undefined;
  const target = name.slice(0, index);
  if (!TARGET_NAME.test(target) || target.length > MAX_TARGET_NAME_LENGTH)
    return undefined;
  return { target, tool: name.slice(index + 1) };
}
