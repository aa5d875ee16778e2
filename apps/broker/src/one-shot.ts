import { ToolCatalog, type Backend } from '@heretek/catalog';
import { Broker } from './broker.js';
import type { BrokerConfig } from './config.js';
import type { TrustLayer } from './trust/trust-layer.js';
import type { ToolGateway } from './types.js';

/**
 * A line of a one-shot command's report (`--check`, `--pin`). Like every
 * output of the bin that is not MCP, it goes to stderr.
 */
export function out(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** A one-shot command's error line, prefixed with the bin's name. */
export function fail(message: string): void {
  process.stderr.write(`heretek-lazy-broker: ${message}\n`);
}

/**
 * A broker that starts with an empty catalog, for commands that discover
 * once and report (`--check`, `--pin`).
 */
export function discoveryBroker(
  config: BrokerConfig,
  backends: Backend[],
  gateway: ToolGateway,
  trust: TrustLayer | undefined,
): Broker {
  return new Broker({
    role: config.role,
    catalog: new ToolCatalog({ tools: [] }),
    backends,
    gateway,
    gatewayMode: config.gatewayMode,
    trust,
  });
}
