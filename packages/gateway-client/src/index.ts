export { VERSION } from './version.js';
export { GatewayClient } from './gateway-client.js';
export type {
  CallToolOptions,
  CallToolResult,
  EndpointInfo,
  ListToolsOptions,
  McpTool,
} from './gateway-client.js';
export {
  DEFAULT_MAX_CONCURRENT_PER_ENDPOINT,
  DEFAULT_MAX_LIST_PAGES,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  gatewayClientOptionsSchema,
  gatewayConfigFromEnv,
} from './config.js';
export type { GatewayClientOptions, GatewayMode } from './config.js';
export {
  GatewayAbortedError,
  GatewayClosedError,
  GatewayConfigError,
  GatewayConnectionError,
  GatewayCursorLoopError,
  GatewayError,
  GatewayErrorCode,
  GatewayHttpError,
  GatewayJsonRpcError,
  GatewayMalformedResponseError,
  GatewayNegotiationError,
  GatewayResponseTooLargeError,
  GatewaySessionLostError,
  GatewayTimeoutError,
} from './errors.js';
export type { GatewayErrorOptions, JsonRpcErrorObject } from './errors.js';
export {
  MAX_TARGET_NAME_LENGTH,
  splitMultiplexedName,
  validateTargetName,
} from './target-name.js';
