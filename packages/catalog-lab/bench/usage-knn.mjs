// Prototype of request-level usage evidence (k nearest remembered requests), measured
// outside the package's scoring: each past request is a BM25 document; a tool's usage
// score is the rank-discounted sum of its `top` best-matching requests, times `w`,
// added to the catalog's text score (usage field off unless "usage": true). Dropped:
// see the usage tuning record in the README. Usage, after a build:
//   node bench/usage-knn.mjs '[{"w":0.5,"k1":1.2,"b":0.75,"top":3}]'
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolCatalog } from '@heretek/catalog';
import {
  evaluateRankings,
  loadBenchmark,
  loadUsageLog,
  queryObjectives,
} from '../dist/index.js';
const here = dirname(fileURLToPath(import.meta.url));
const metatool = loadBenchmark({
  directory: resolve(here, '../data/metatool'),
});
const log = loadUsageLog({
  file: resolve(here, '../data/metatool/usage.jsonl'),
});
const live = loadBenchmark({
  directory: resolve(here, '../data/livemcpbench'),
});
const mean = (v) => v.reduce((s, x) => s + x, 0) / Math.max(1, v.length);
const f3 = (x) => x.toFixed(3);
const configs = JSON.parse(
  process.argv[2] ??
    '[{"w":0,"usage":true},{"w":0.5,"k1":1.2,"b":0.75,"top":3},{"w":0.25,"k1":1.2,"b":0.75,"top":3,"usage":true}]',
);
function qualify(data) {
  const m = new Map();
  for (const [n, b] of data.benchmarkName) m.set(b, n);
  return m;
}
function buildRequests(catalog, data, lines) {
  const q = qualify(data);
  const per = new Map();
  for (const line of lines) {
    const terms = catalog.searchTerms(line.query);
    if (!terms.length) continue;
    for (const rel of line.relevant) {
      const t = q.get(rel);
      if (!t) continue;
      let a = per.get(t);
      if (!a) {
        a = [];
        per.set(t, a);
      }
      a.push(terms);
      if (a.length > 100) a.shift();
    }
  }
  const reqs = [];
  for (const [tool, a] of per)
    for (const terms of a) reqs.push({ tool, terms });
  const df = new Map();
  let tot = 0;
  const tfs = reqs.map((r) => {
    const tf = new Map();
    for (const t of r.terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    tot += r.terms.length;
    return tf;
  });
  return {
    reqs,
    tfs,
    df,
    avg: tot / Math.max(1, reqs.length),
    N: reqs.length,
    tools: per.size,
  };
}
function knn(R, qterms, cfg) {
  const out = new Map();
  const qs = [...new Set(qterms)];
  for (let i = 0; i < R.reqs.length; i++) {
    const tf = R.tfs[i];
    let s = 0;
    const len = R.reqs[i].terms.length;
    for (const t of qs) {
      const f = tf.get(t);
      if (!f) continue;
      const df = R.df.get(t);
      const idf = Math.log(1 + (R.N - df + 0.5) / (df + 0.5));
      s +=
        (idf * f * (cfg.k1 + 1)) /
        (f + cfg.k1 * (1 - cfg.b + (cfg.b * len) / R.avg));
    }
    if (s > 0) {
      const tool = R.reqs[i].tool;
      let a = out.get(tool);
      if (!a) {
        a = [];
        out.set(tool, a);
      }
      a.push(s);
    }
  }
  const res = new Map();
  for (const [tool, a] of out) {
    a.sort((x, y) => y - x);
    let v = 0;
    for (let j = 0; j < Math.min(cfg.top, a.length); j++) v += a[j] / (j + 1);
    res.set(tool, v);
  }
  return res;
}
function rank(catalog, data, query, R, cfg) {
  const hits = catalog.search({ query: query.query, limit: 200 }).hits;
  const sc = new Map(hits.map((h) => [h.name, h.score]));
  if (R && cfg.w > 0) {
    const u = knn(R, catalog.searchTerms(query.query), cfg);
    for (const [t, v] of u) sc.set(t, (sc.get(t) ?? 0) + cfg.w * v);
  }
  return [...sc]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 10)
    .map(([n]) => data.benchmarkName.get(n) ?? n);
}
for (const cfg of configs) {
  const tuning = {
    relativeCutoff: 0,
    ...(cfg.usage ? {} : { usageWeight: 0 }),
    ...(cfg.tuning ?? {}),
  };
  const curve = [100, 1000, log.length].map((count) => {
    const catalog = new ToolCatalog({ tools: metatool.entries, tuning });
    const lines = log.slice(0, count);
    const q = qualify(metatool);
    if (cfg.usage)
      for (const l of lines)
        for (const r of l.relevant) {
          const t = q.get(r);
          if (t) catalog.recordUse({ query: l.query, tool: t });
        }
    const R = buildRequests(catalog, metatool, lines);
    const rankings = metatool.queries.map((qq) =>
      rank(catalog, metatool, qq, R, cfg),
    );
    return {
      o: mean(queryObjectives({ queries: metatool.queries, rankings })),
      m: evaluateRankings({ queries: metatool.queries, rankings }).metrics,
    };
  });
  const catalog = new ToolCatalog({ tools: live.entries, tuning });
  const q = qualify(live);
  const rankings = live.queries.map((qq, i) => {
    const lines = live.queries.filter((_, j) => j !== i);
    catalog.loadUsage([]);
    if (cfg.usage)
      for (const l of lines)
        for (const r of l.relevant) {
          const t = q.get(r);
          if (t) catalog.recordUse({ query: l.query, tool: t });
        }
    return rank(catalog, live, qq, buildRequests(catalog, live, lines), cfg);
  });
  const lo = mean(queryObjectives({ queries: live.queries, rankings }));
  const lm = evaluateRankings({ queries: live.queries, rankings }).metrics;
  const mo = mean(curve.map((p) => p.o));
  console.log(
    JSON.stringify(cfg),
    '| MT',
    curve.map((p) => f3(p.m['nDCG@10'])).join('/'),
    'obj',
    f3(mo),
    '| LIVE',
    f3(lm['nDCG@10']),
    f3(lm['R@5']),
    'obj',
    f3(lo),
    '| macro',
    f3((mo + lo) / 2),
  );
}
