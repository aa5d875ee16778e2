/**
 * `@heretek/catalog-lab`: the benchmark harness behind `heretek-catalog-lab eval`. Loads a
 * benchmark directory, ranks its queries with the catalog and with a plain BM25 reference,
 * and scores the rankings.
 *
 * @packageDocumentation
 */
export {
  loadBenchmark,
  evaluateRankings,
  rankWithCatalog,
  rankWithPlainBm25,
  targetFromServerName,
  loadUsageLog,
  replayUsage,
  rankLeaveOneOut,
  type BenchmarkData,
  type BenchmarkQuery,
  type BenchmarkTool,
  type EvaluationReport,
  type RetrievalMetrics,
} from './evaluate.js';
export { PlainBm25, type PlainDocument } from './plain-bm25.js';
export { seededRandom } from './random.js';
export {
  queryObjectives,
  foldAssignment,
  crossValidate,
  chooseRefinement,
  leaveOneSetOut,
} from './selection.js';
