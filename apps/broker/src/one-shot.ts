import { ToolCatalog, type Backend } from '@heretek/catalog';
import { Broker } from './broker.js';
import { BrokerConfigError, type BrokerConfig } from './config.js';
import { errorText } from './error-text.js';
import type { TrustLayer } from './trust/trust-layer.js';
import type { ToolGateway } from './types.js';

/** A line of a one-shot command's report (`--check`, `--pin`), on stderr like all but MCP. */
export function out(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** An error line of the bin, prefixed with its name. */
export function fail(problem: unknown): void {
  const text =
    typeof problem === 'string'
      ? problem
      : problem instanceof BrokerConfigError
        ? problem.message
        : errorText(problem);
  process.stderr.write(`heretek-lazy-broker: ${text}\n`);
}

/** A broker with an empty catalog, for commands that discover once and report. */
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
