// Prototype of clause segmentation on the default search, measured outside the package's
// scoring: a request is split into clauses (sentence ends, commas, "and", "then"); the
// full request's ranking and each clause's ranking are fused by reciprocal rank (`k`),
// the clauses at weight `w` divided by (clauses ^ `norm`). w 0 is the default. Dropped:
// see the tuning record in the README. Usage, after a build:
//   node bench/segments.mjs '[{"w":0.25,"k":60,"norm":1}]'
import { ToolCatalog } from '@heretek/catalog';
import { figuresLine, sets } from './prototype-sets.mjs';
const split = (q) =>
  q
    .split(
      /(?:[.;!?]\s+|,\s*(?:and\s+)?(?:then\s+)?|\s+and\s+then\s+|\s+then\s+|\s+and\s+)/i,
    )
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
for (const cfg of JSON.parse(
  process.argv[2] ??
    '[{"w":0,"k":60,"norm":0},{"w":0.25,"k":60,"norm":1},{"w":1,"k":60,"norm":1},{"w":2,"k":10,"norm":1}]',
)) {
  const row = [];
  for (const [name, data] of Object.entries(sets)) {
    const catalog = new ToolCatalog({ tools: data.entries });
    const rankings = data.queries.map((q) => {
      const full = catalog
        .search({ query: q.query, limit: 50 })
        .hits.map((h) => h.name);
      const parts = split(q.query);
      const fused = new Map();
      full.forEach((n, i) =>
        fused.set(n, (fused.get(n) ?? 0) + 1 / (cfg.k + i + 1)),
      );
      if (parts.length > 1 && cfg.w > 0)
        for (const part of parts)
          catalog
            .search({ query: part, limit: 50 })
            .hits.forEach((h, i) =>
              fused.set(
                h.name,
                (fused.get(h.name) ?? 0) +
                  cfg.w / parts.length ** cfg.norm / (cfg.k + i + 1),
              ),
            );
      return [...fused]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 10)
        .map(([n]) => data.benchmarkName.get(n) ?? n);
    });
    row.push(figuresLine(name, data, rankings));
  }
  console.log(JSON.stringify(cfg), '|', row.join(' | '));
}
