export { Broker } from './broker.js';
export type {
  BrokerEvent,
  BrokerOptions,
  SearchToolsResult,
  ToolSchemaView,
} from './broker.js';
export type { DiscoveryEvent, DiscoveryProgress } from './discovery.js';
export type {
  DiscoveryOutcome,
  GatewayEvent,
  GatewayTool,
  ToolCallResult,
  ToolGateway,
} from './types.js';
export { BrokerError, BrokerErrorCode } from './errors.js';
export { runServer } from './run.js';
export { VERSION } from './version.js';
export { openBroker, readBrokerSetup } from './open-broker.js';
export type { BrokerSetup, OpenedBroker } from './open-broker.js';
export { startBroker } from './start-broker.js';
export type { StartProblem } from './start-broker.js';
// The meta-tools of the one table, for hosts that register them as their own
// tools: what `tools/list` shows of them (plain data) and their answers.
export { answerMetaTool, listedMetaTools } from './meta-tools.js';
export type {
  ListedMetaTool,
  MetaToolAnswer,
  MetaToolName,
} from './meta-tools.js';
