import type { ToolGateway } from './broker.js';
import type { BrokerConfig } from './config.js';

/** The gateway the broker calls through, built from its configuration. */
export function createGateway(_config: BrokerConfig): ToolGateway | undefined {
  return undefined;
}
