export { VERSION } from './version.js';
// Every export of these three modules is public.
export * from './gateway-client.js';
export * from './errors.js';
export * from './target-name.js';
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
