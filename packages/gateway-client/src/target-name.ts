import {
  splitMultiplexedName as splitName,
  TARGET_NAME_RULE,
  targetNameProblem,
} from '@heretek/internal';
import { GatewayConfigError } from './errors.js';

/**
 * Check a target name the way agentgateway does (`validate_mcp_target_name`):
 * 1 to 253 characters of lowercase letters, digits, `-` and `.`. `_` is
 * rejected because agentgateway joins `<target>_<tool>` and splits at the
 * first `_`; `+` is reserved as well.
 *
 * @returns the name, unchanged, when it is valid.
 * @throws {GatewayConfigError} (`INVALID_CONFIG`, setting `target`) otherwise.
 *
 * @example
 * ```ts
 * validateTargetName('ghidra'); // 'ghidra'
 * validateTargetName('my_server'); // throws: '_' is reserved
 * ```
 */
export function validateTargetName(name: string): string {
  const problem = targetNameProblem(name);
  if (problem === undefined) return name;
  throw new GatewayConfigError({
    setting: 'target',
    target: typeof name === 'string' ? name : undefined,
    message: `Invalid target name ${JSON.stringify(name)}: ${problem}. Use ${TARGET_NAME_RULE}.`,
  });
}

/**
 * Split a multiplexed tool name `<target>_<tool>` at the first `_`, as
 * agentgateway does. Returns `undefined` when the name has no `_`, either
 * side is empty, or the part before it is not a valid target name.
 *
 * @example
 * ```ts
 * splitMultiplexedName('ghidra_list_functions'); // { target: 'ghidra', tool: 'list_functions' }
 * splitMultiplexedName('Ghidra_x'); // undefined
 * ```
 */
export function splitMultiplexedName(
  name: string,
): { target: string; tool: string } | undefined {
  return splitName(name);
}
