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
// The meta-tools in one table (description, zod input, listed schema,
// annotations, answer), for hosts that register them as their own tools.
export { META_TOOLS, META_TOOL_NAMES, answerMetaTool } from './meta-tools.js';
export type {
  MetaToolAnswer,
  MetaToolDefinition,
  MetaToolName,
} from './meta-tools.js';
