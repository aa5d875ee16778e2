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

type GatewayOptions = ConstructorParameters<typeof GatewayClient>[0];

/** What the broker passes on from the gateway client besides its configuration. */
export type GatewayHooks = Pick<
  GatewayOptions,
  'onToolsListChanged' | 'onElicitation' | 'onSampling' | 'onLog'
>;

/**
 * The gateway the broker discovers and calls tools through, built from its
 * configuration: one `GatewayClient` (keep-alive pool, one session per
 * endpoint) that sends the broker's role as `x-heretek-role`. The client is
 * loaded here, on demand, so an offline broker never loads it. The options
 * are checked with the client's own schema first; every option it refuses
 * becomes one line of a {@link BrokerConfigError} naming the variable.
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
    ...(config.gatewayToken === undefined
      ? {}
      : { token: config.gatewayToken }),
  };
  const checked = gatewayClientOptionsSchema.safeParse(options);
  if (!checked.success) {
    throw new BrokerConfigError(
      checked.error.issues.map((issue) => {
        const option = String(issue.path[0] ?? 'options');
        return `${VARIABLE_OF_OPTION[option] ?? option}: ${issue.message}`;
      }),
    );
  }
  return new GatewayClient({ ...options, ...hooks });
}
