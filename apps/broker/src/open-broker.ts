import type { Backend } from '@heretek/catalog';
import type { Broker } from './broker.js';
import { loadBrokerConfig, type BrokerConfig } from './config.js';
import { createGateway, type GatewayHooks } from './gateway.js';
import { backendsOf } from './run.js';
import { brokerFor, openTrust } from './serve.js';
import type { TrustLayer } from './trust/trust-layer.js';
import type { UsageLearning } from './usage/usage-learning.js';

/** The broker's configuration as read from an environment, with its backend table. */
export type BrokerSetup = {
  config: BrokerConfig;
  backends: Backend[];
};

/**
 * Reads the broker's configuration from `env` (the `HERETEK_*` variables)
 * and its backend table (`backendsFile`, else `HERETEK_BACKENDS_FILE`, else
 * the 12 defaults), as the bin does. Throws a `BrokerConfigError` naming each
 * bad variable.
 */
export function readBrokerSetup(options: {
  env: NodeJS.ProcessEnv;
  /** A backend table file that overrides `HERETEK_BACKENDS_FILE` (the CLI's `--backends`). */
  backendsFile?: string;
}): BrokerSetup {
  const config = loadBrokerConfig(options.env);
  return { config, backends: backendsOf(config, options.backendsFile) };
}

/** What {@link openBroker} built. */
export type OpenedBroker = {
  broker: Broker;
  /** Learned uses; call `learning.load()` once the first answer is out. */
  learning: UsageLearning;
  /** The trust layer while its pins file opens (`undefined` offline). */
  trust: Promise<TrustLayer> | undefined;
};

/**
 * Builds the broker the stdio server runs, for a host that runs it in its own
 * process: the gateway (none offline), the trust layer over the pins file,
 * learning from use, and the seed catalog of the configured backends until
 * discovery answers. Discovery is not started (`broker.start()`).
 */
export async function openBroker(options: {
  setup: BrokerSetup;
  log: (line: string) => void;
  /** What the gateway passes on besides results (list changes are wired here). */
  hooks?: Omit<GatewayHooks, 'onToolsListChanged'>;
}): Promise<OpenedBroker> {
  const { config, backends } = options.setup;
  const { log } = options;
  const gateway = config.offline
    ? undefined
    : await createGateway(config, {
        // Live tool lists: a backend's tools/list_changed re-lists it alone.
        // The gateway sends nothing before discovery starts, and discovery
        // starts once the broker below exists.
        onToolsListChanged: ({ target }) => broker.toolsListChanged(target),
        ...options.hooks,
      });
  const trust = gateway === undefined ? undefined : openTrust(config, log);
  const { broker, learning } = brokerFor(config, backends, {
    gateway,
    trust,
    log,
  });
  return { broker, learning, trust };
}
