import { readFileSync } from 'node:fs';
import {
  DEFAULT_BACKENDS,
  SEED_TOOLS,
  ToolCatalog,
  loadBackends,
  type Backend,
} from '@heretek/catalog';
import { Broker } from './broker.js';
import {
  BrokerConfigError,
  loadBrokerConfig,
  type BrokerConfig,
} from './config.js';
import { createGateway, type GatewayHooks } from './gateway.js';
import type { TrustLayer } from './trust/trust-layer.js';
import type { ToolGateway } from './types.js';
import { UsageLearning } from './usage/usage-learning.js';

/** The broker's configuration as read from an environment, with its backend table. */
export type BrokerSetup = {
  config: BrokerConfig;
  backends: Backend[];
};

/**
 * Reads the broker's configuration from `env` (the `HERETEK_*` variables)
 * and its backend table (`backendsFile`, else `HERETEK_BACKENDS_FILE`, else
 * the 12 defaults). Throws {@link BrokerConfigError} naming each bad variable.
 */
export function readBrokerSetup(options: {
  env: NodeJS.ProcessEnv;
  /** A backend table file that overrides `HERETEK_BACKENDS_FILE` (the CLI's `--backends`). */
  backendsFile?: string;
}): BrokerSetup {
  const config = loadBrokerConfig(options.env);
  const file = options.backendsFile ?? config.backendsFile;
  const source =
    options.backendsFile === undefined ? 'HERETEK_BACKENDS_FILE' : '--backends';
  const backends =
    file === undefined ? [...DEFAULT_BACKENDS] : loadBackendsFile(file, source);
  return { config, backends };
}

/** What {@link openBroker} built. */
export type OpenedBroker = {
  broker: Broker;
  /** Learned uses; call `learning.load()` once the first answer is out. */
  learning: UsageLearning;
  /** The trust layer while its pins file opens (`undefined` offline). */
  trust: Promise<TrustLayer | undefined> | undefined;
};

/**
 * Builds the broker the stdio server runs, from a configuration: the
 * gateway (none offline), the trust layer over the pins file, learning from
 * use, and the seed catalog of the configured backends until discovery
 * answers. Discovery is not started (`broker.start()`).
 */
export async function openBroker(options: {
  setup: BrokerSetup;
  log: (line: string) => void;
  /** What the gateway passes on during calls besides results (list changes are wired here). */
  hooks?: Omit<GatewayHooks, 'onToolsListChanged'>;
}): Promise<OpenedBroker> {
  const { config, backends } = options.setup;
  const log = options.log;
  let toolsListChanged: (target: string) => void = () => {};
  const gateway: ToolGateway | undefined = config.offline
    ? undefined
    : await createGateway(config, {
        // Live tool lists: a backend's tools/list_changed re-lists it alone.
        onToolsListChanged: ({ target }) => toolsListChanged(target),
        ...options.hooks,
      });
  // The pins file opens beside the first answers: discovery and calls wait
  // for it, searches do not. Offline, nothing is discovered or sent, so there
  // is nothing to pin.
  const trust =
    gateway === undefined
      ? undefined
      : // Loaded here: the first answer does not need the trust layer.
        import('./trust/trust-layer.js').then(({ TrustLayer }) =>
          TrustLayer.open({
            policy: config.pinPolicy,
            pinsFile: config.pinsFile,
            pinsReadOnly: config.pinsReadOnly,
            log,
          }),
        );
  trust?.catch(() => {});
  const catalog = seedCatalogFor(backends);
  const learning = new UsageLearning({
    file: config.usageFile,
    log,
    // A learned use is ranking evidence of its own field in the catalog.
    onUse: (use) => catalog.recordUse({ terms: use.terms, tool: use.tool }),
  });
  const broker = new Broker({
    role: config.role,
    catalog,
    backends,
    ...(trust === undefined ? {} : { trust }),
    learning,
    ...(gateway === undefined ? {} : { gateway }),
    gatewayMode: config.gatewayMode,
    discoveryTtlMs: config.discoveryTtlMs,
    ...(config.defaultProfile === undefined
      ? {}
      : { defaultProfile: config.defaultProfile }),
    log,
  });
  toolsListChanged = (target) => broker.toolsListChanged(target);
  return { broker, learning, trust };
}

/** The seed entries of the configured backends, with the configured profiles. */
function seedCatalogFor(backends: readonly Backend[]): ToolCatalog {
  const byTarget = new Map(backends.map((b) => [b.target, b]));
  const tools = SEED_TOOLS.filter((t) => byTarget.has(t.target)).map((t) => ({
    ...t,
    profile: byTarget.get(t.target)!.profile,
  }));
  return new ToolCatalog({ tools });
}

function loadBackendsFile(file: string, source: string): Backend[] {
  try {
    readFileSync(file);
  } catch (error) {
    throw new BrokerConfigError([
      `${source}: cannot read ${file}: ${describe(error)}`,
    ]);
  }
  try {
    return loadBackends({ file });
  } catch (error) {
    throw new BrokerConfigError([`${source}: ${describe(error)}`]);
  }
}

function describe(value: unknown): string {
  return value instanceof Error ? value.message : String(value);
}
