// Learning from use: the usage file and the search-then-call rule. The
// broker's search and call paths use it through these entry points.
export {
  USAGE_COMPACT_TO_BYTES,
  USAGE_FILE_MAX_BYTES,
  USAGE_LINE_VERSION,
  USAGE_LOCK_STALE_MS,
  USAGE_LOCK_WAIT_MS,
  USAGE_MAX_TERMS,
  USAGE_MAX_TERM_LENGTH,
  USAGE_MAX_TOOL_LENGTH,
  UsageLog,
  defaultUsageFilePath,
  formatUsageDescription,
  parseUsageLine,
  type UsageDescription,
  type UsageLoad,
  type UsageRecord,
  type UsageStatus,
} from './usage-log.js';
export {
  USE_MAX_OPEN_SEARCHES,
  USE_WINDOW_CALLS,
  USE_WINDOW_MS,
  UseRecorder,
  type RecordedUse,
} from './use-recorder.js';
export { UsageLearning } from './usage-learning.js';
