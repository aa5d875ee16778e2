export { Broker } from './broker.js';
export type {
  BrokerOptions,
  DiscoveryProgress,
  SearchToolsResult,
  ToolSchemaView,
} from './broker.js';
export type {
  DiscoveryOutcome,
  GatewayTool,
  ToolCallResult,
  ToolGateway,
} from './types.js';
export { BrokerError } from './errors.js';
export { BrokerErrorCode } from './errors.js';
export { runServer } from './run.js';
export { VERSION } from './version.js';
export { openBroker, readBrokerSetup } from './open-broker.js';
export type { BrokerSetup, OpenedBroker } from './open-broker.js';
export { META_TOOLS, answerMetaTool } from './meta-tools.js';
export type { MetaToolDefinition, MetaToolName } from './meta-tools.js';
