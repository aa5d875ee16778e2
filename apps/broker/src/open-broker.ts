import { readFileSync } from 'node:fs';
import {
  DEFAULT_BACKENDS,
  SEED_TOOLS,
  ToolCatalog,
  loadBackends,
  openAiEmbeddings,
  type Backend,
} from '@heretek/catalog';
import { Broker } from './broker.js';
import {
  BrokerConfigError,
  loadBrokerConfig,
  type BrokerConfig,
} from './config.js';
import { HybridRanking } from './embeddings/hybrid-ranking.js';
import { errorText } from './error-text.js';
import { EventStream } from './event-stream.js';
import { createGateway, type GatewayHooks } from './gateway.js';
import { IndexCache } from './index-cache.js';
import type { TrustLayer } from './trust/trust-layer.js';
import type { GatewayEvent, ToolGateway } from './types.js';
import { UsageLearning } from './usage/usage-learning.js';

type Log = (line: string) => void;

/** The broker's configuration as read from an environment, with its backend table. */
export type BrokerSetup = ReturnType<typeof readBrokerSetup>;

/**
 * Reads the broker's configuration from `env` (the `HERETEK_*` variables)
 * and its backend table (`backendsFile`, else `HERETEK_BACKENDS_FILE`, else
 * the 12 defaults), as the bin does. Throws a `BrokerConfigError` naming each
 * bad variable.
 */
export function readBrokerSetup(options: {
  env: NodeJS.ProcessEnv;
  /** A backend table file that overrides `HERETEK_BACKENDS_FILE` (the CLI's `--backends`). */
  backendsFile?: string | undefined;
}) {
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
  /**
   * Loads the gateway client now (once) and resolves when it is loaded;
   * rejects with a `BrokerConfigError` naming each option it refuses.
   * Settled already unless opened with `deferGateway` (`undefined` offline).
   */
  connectGateway: (() => Promise<void>) | undefined;
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
  /** Answers a backend's elicitation and sampling requests outside a call with handlers of its own (without them they are refused). */
  backendRequests?: Pick<GatewayHooks, 'onElicitation' | 'onSampling'>;
  /**
   * Load the gateway client when it is first used or `connectGateway()` is
   * called (its option errors come from there), not before this resolves: a
   * restart then serves its index cache first.
   */
  deferGateway?: boolean;
}): Promise<OpenedBroker> {
  const { config, backends } = options.setup;
  const { log } = options;
  // The state files are read first, beside the gateway client's loading.
  const trust = config.offline ? undefined : openTrust(config, log);
  const indexCache = indexCacheFor(config, trust, log);
  // What the gateway client reports besides answers becomes the gateway's
  // events: a backend's tools/list_changed re-lists it alone (discovery
  // listens), its log messages go to whoever listens to the broker.
  const events = new EventStream<GatewayEvent>();
  const load = () =>
    createGateway(config, {
      ...options.backendRequests,
      onToolsListChanged: ({ target }) =>
        events.emit({ type: 'tools-list-changed', target }),
      onLog: (entry) => events.emit({ type: 'backend-log', ...entry }),
    });
  const { gateway, connect } = config.offline
    ? { gateway: undefined, connect: undefined }
    : lazyGateway(load, events);
  if (connect !== undefined && options.deferGateway !== true) await connect();
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
    trust,
    learning,
    gateway,
    indexCache,
    hybrid: hybridOf(config, log),
    gatewayMode: config.gatewayMode,
    discoveryTtlMs: config.discoveryTtlMs,
    resultGuard: config.resultGuard,
    defaultProfile: config.defaultProfile,
    log,
  });
  return { broker, learning, trust, connectGateway: connect };
}

/**
 * A gateway whose client is loaded (once) when it is first used or
 * `connect()` is called: loading it (undici and the MCP client, a tenth of
 * a second and more) waits until the first answers need it.
 */
function lazyGateway(
  load: () => Promise<ToolGateway>,
  events: EventStream<GatewayEvent>,
) {
  let client: Promise<ToolGateway> | undefined;
  const loaded = () => (client ??= load());
  const gateway: ToolGateway = {
    listTools: (options) =>
      loaded().then((gateway) => gateway.listTools(options)),
    // The gateway client lists every target at once in multiplexed mode.
    listAllTools: (options) =>
      loaded().then((gateway) => gateway.listAllTools!(options)),
    callTool: (options) =>
      loaded().then((gateway) => gateway.callTool(options)),
    close: () =>
      client === undefined
        ? Promise.resolve()
        : client.then(
            (gateway) => gateway.close(),
            () => {},
          ),
    subscribe: events.subscribe,
  };
  return { gateway, connect: () => loaded().then(() => {}) };
}

/**
 * The pins file opens beside the first answers: discovery and calls wait for
 * it, the MCP handshake and tools/list do not. Offline, nothing is discovered
 * or sent, so there is nothing to pin.
 */
function openTrust(config: BrokerConfig, log: Log): Promise<TrustLayer> {
  // Loaded here: the first answer does not need the trust layer.
  const trust = import('./trust/trust-layer.js').then(({ TrustLayer }) =>
    TrustLayer.open({
      policy: config.pinPolicy,
      pinsFile: config.pinsFile,
      pinsReadOnly: config.pinsReadOnly,
      // Cached tools are admitted on the pins' hashes at once; calls wait
      // until every entry is checked.
      verifyPins: 'later',
      log,
    }),
  );
  trust.catch(() => {});
  return trust;
}

/** The index cache, its file being read already (beside the rest of start-up); none offline or with `HERETEK_INDEX_CACHE_FILE=off`. */
export function indexCacheFor(
  config: Pick<BrokerConfig, 'offline' | 'indexCacheFile'>,
  trust: Promise<TrustLayer> | undefined,
  log: Log,
): IndexCache | undefined {
  if (config.offline || config.indexCacheFile === 'off') return undefined;
  const cache = new IndexCache({
    file: config.indexCacheFile,
    log,
    // The pins file's digest and the cached targets whose tools all match
    // its pins, taken together from the pin store (none under policy `off`).
    ...(trust === undefined
      ? {}
      : {
          pinsCovering: async (listings) => {
            const pins = (await trust).pins;
            return pins?.fileDigest(() => {
              const covered = new Set<string>();
              for (const [target, { definitions }] of listings)
                if (definitions !== undefined && pins.matches(definitions))
                  covered.add(target);
              return covered;
            });
          },
        }),
  });
  cache.prefetch();
  return cache;
}

/** The seed entries of the configured backends, with the configured profiles. */
function seedCatalogFor(backends: readonly Backend[]): ToolCatalog {
  const byTarget = new Map(backends.map((row) => [row.target, row]));
  const tools = SEED_TOOLS.filter((tool) => byTarget.has(tool.target)).map(
    (tool) => ({ ...tool, profile: byTarget.get(tool.target)!.profile }),
  );
  return new ToolCatalog({ tools });
}

/** The backend table: `--backends`, else `HERETEK_BACKENDS_FILE`, else the defaults. */
function backendsOf(config: BrokerConfig, flag: string | undefined): Backend[] {
  const file = flag ?? config.backendsFile;
  if (file === undefined) return [...DEFAULT_BACKENDS];
  const source = flag === undefined ? 'HERETEK_BACKENDS_FILE' : '--backends';
  try {
    readFileSync(file);
  } catch (error) {
    throw new BrokerConfigError([
      `${source}: cannot read ${file}: ${errorText(error)}`,
    ]);
  }
  try {
    return loadBackends({ file });
  } catch (error) {
    // The table's own message names the row and field; it is one problem
    // in the list, so its code is left out.
    const message = error instanceof Error ? error.message : String(error);
    throw new BrokerConfigError([`${source}: ${message}`]);
  }
}

/** Hybrid ranking when `HERETEK_EMBEDDINGS_URL` is set (the key is never logged). */
function hybridOf(config: BrokerConfig, log: Log): HybridRanking | undefined {
  const embeddings = config.embeddings;
  if (embeddings === undefined) return undefined;
  log(
    `embeddings: hybrid ranking with ${embeddings.model} at ${embeddings.url} (weight ${embeddings.weight})`,
  );
  return new HybridRanking({
    provider: openAiEmbeddings(embeddings),
    cacheFile: embeddings.cacheFile,
    queryTimeoutMs: embeddings.queryTimeoutMs,
    fusion: { weight: embeddings.weight },
    log,
  });
}
