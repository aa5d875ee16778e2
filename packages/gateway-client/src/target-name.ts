import { TARGET_NAME_RULE, targetNameProblem } from '@heretek/internal';
import { GatewayConfigError } from './errors.js';

/**
 * `name` when agentgateway accepts it as a target (`validate_mcp_target_name`:
 * 1 to 253 of `a-z0-9-.`; `_` splits `<target>_<tool>`); otherwise throws
 * {@link GatewayConfigError} (`INVALID_CONFIG`, setting `target`).
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
