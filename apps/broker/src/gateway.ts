import { BrokerConfigError } from './errors.js';
import type { BrokerConfig } from './config.js';
import type { ToolGateway } from './types.js';

/** The environment variable behind each gateway client option, to word the client's option errors. */
const VARIABLE_OF_OPTION: Readonly<Record<string, string>> = {
  url: 'HERETEK_GATEWAY_URL',
  mode: 'HERETEK_GATEWAY_MODE',
  token: 'HERETEK_GATEWAY_TOKEN',
  timeoutMs: 'HERETEK_GATEWAY_TIMEOUT_MS',
  role: 'HERETEK_BROKER_ROLE',
};

/**
 * The gateway the broker discovers and calls tools through, built from its
 * configuration: one `GatewayClient` (keep-alive pool, one session per
 * endpoint) that sends the broker's role as `x-heretek-role`. The client is
 * loaded here, on demand, so an offline broker never loads it. An option the
 * client refuses becomes a {@link BrokerConfigError} naming the variable.
 */
export async function createGateway(
  config: BrokerConfig,
): Promise<ToolGateway> {
  const { GatewayClient } = await import('@heretek/gateway-client');
  try {
    return new GatewayClient({
      url: config.gatewayUrl,
      mode: config.gatewayMode,
      role: config.role,
      timeoutMs: config.gatewayTimeoutMs,
      ...(config.gatewayToken === undefined
        ? {}
        : { token: config.gatewayToken }),
    });
  } catch (error) {
    const setting = (error as { setting?: unknown } | null)?.setting;
    if (typeof setting !== 'string') throw error;
    const variable = VARIABLE_OF_OPTION[setting] ?? setting;
    const reason = error instanceof Error ? error.message : String(error);
    throw new BrokerConfigError([`${variable}: ${reason}`]);
  }
}
