import { TARGET_NAME_RULE, targetNameProblem } from '@heretek/internal';
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

// Documented where it is defined; its users import it from here.
export { splitMultiplexedName } from '@heretek/internal';
