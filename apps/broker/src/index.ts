export { Broker } from './broker.js';
export type {
  BrokerOptions,
  DiscoveryOutcome,
  GatewayTool,
  SearchToolsResult,
  ToolCallResult,
  ToolGateway,
  ToolSchemaView,
} from './broker.js';
export { BrokerError } from './errors.js';
export type { BrokerErrorCode } from './errors.js';
export { BrokerConfigError, loadBrokerConfig } from './config.js';
export type { BrokerConfig } from './config.js';
export { META_TOOL_NAMES, createBrokerServer, formatSearch } from './server.js';
export { runServer } from './run.js';
export { VERSION } from './version.js';
