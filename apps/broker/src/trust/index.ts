// The broker's trust layer (pinned definitions, cleaned descriptions, flagged
// injections), loaded on demand by `--check` and `--pin`, and by the evals in
// eval/ (transpiled on the fly).
export {
  DETECTOR,
  ShadowingIndex,
  createShadowingContext,
  flagTool,
  scoreSignals,
  toolSignals,
} from './injection-rules.js';
export { PinStore } from './pin-store.js';
export { describePins, formatPendingPins } from './pin-report.js';
export { TrustLayer } from './trust-layer.js';
export { sanitizeDescription } from './sanitize.js';
