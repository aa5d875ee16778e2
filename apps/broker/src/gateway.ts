import type { GatewayClient } from '@heretek/gateway-client';
import type { BrokerConfig } from './config.js';
import { BrokerConfigError } from './errors.js';
import type { ToolGateway } from './types.js';

/** The environment variable behind each gateway client option, to word the client's option errors. */
const VARIABLE_OF_OPTION: Readonly<Record<string, string>> = {
  url: 'HERETEK_GATEWAY_URL',
  mode: 'HERETEK_GATEWAY_MODE',
  token: 'HERETEK_GATEWAY_TOKEN',
  timeoutMs: 'HERETEK_GATEWAY_TIMEOUT_MS',
  maxStandaloneStreams: 'HERETEK_GATEWAY_MAX_STREAMS',
  role: 'HERETEK_BROKER_ROLE',
};

/** What the broker passes on from the gateway client besides its configuration. */
export type GatewayHooks = Pick<
  ConstructorParameters<typeof GatewayClient>[0],
  'onToolsListChanged' | 'onElicitation' | 'onSampling' | 'onLog'
>;

/**
 * The broker's `GatewayClient`, loaded on demand (an offline broker never loads it). Options
 * the client's schema refuses become lines of a {@link BrokerConfigError} naming the variable.
 */
export async function createGateway(
  config: BrokerConfig,
  hooks: GatewayHooks = {},
): Promise<ToolGateway> {
  const { GatewayClient, gatewayClientOptionsSchema } =
    await import('@heretek/gateway-client');
  const options = {
    url: config.gatewayUrl,
    mode: config.gatewayMode,
    role: config.role,
    timeoutMs: config.gatewayTimeoutMs,
    maxStandaloneStreams: config.gatewayMaxStreams,
    token: config.gatewayToken,
  };
  const checked = gatewayClientOptionsSchema.safeParse(options);
  if (!checked.success)
    throw new BrokerConfigError(
      checked.error.issues.map((issue) => {
        const option = String(issue.path[0] ?? 'options');
        return `${VARIABLE_OF_OPTION[option] ?? option}: ${issue.message}`;
      }),
    );
  return new GatewayClient({ ...options, ...hooks });
}
