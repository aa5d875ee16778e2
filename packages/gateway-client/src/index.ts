export { VERSION } from './version.js';
export { GatewayClient } from './gateway-client.js';
export type {
  CallProgress,
  CallToolOptions,
  CallToolResult,
  EndpointInfo,
  ListToolsOptions,
  McpTool,
} from './gateway-client.js';
export { GATEWAY_MODES, gatewayClientOptionsSchema } from './config.js';
export type {
  ElicitationHandler,
  GatewayClientOptions,
  GatewayLogEntry,
  GatewayMode,
  SamplingHandler,
  ServerRequestExtra,
  ServerRequestFrom,
  ServerRequestKind,
} from './config.js';
export {
  GatewayAbortedError,
  GatewayClosedError,
  GatewayConfigError,
  GatewayConnectionError,
  GatewayError,
  GatewayErrorCode,
  GatewayHttpError,
  GatewayJsonRpcError,
  GatewayProtocolError,
  GatewayResponseTooLargeError,
  GatewayTimeoutError,
} from './errors.js';
export type { JsonRpcErrorObject } from './errors.js';
export { splitMultiplexedName, validateTargetName } from './target-name.js';
