import { GatewayClient } from '@heretek/gateway-client';
import type { ToolGateway } from './broker.js';
import type { BrokerConfig } from './config.js';

/**
 * The gateway the broker discovers and calls tools through, built from its
 * configuration: one `GatewayClient` (keep-alive pool, one session per
 * endpoint) that sends the broker's role as `x-heretek-role`.
 */
export function createGateway(config: BrokerConfig): ToolGateway {
  return new GatewayClient({
    url: config.gatewayUrl,
    mode: config.gatewayMode,
    role: config.role,
    timeoutMs: config.gatewayTimeoutMs,
    ...(config.gatewayToken === undefined
      ? {}
      : { token: config.gatewayToken }),
  });
}
