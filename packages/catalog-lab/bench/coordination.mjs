// Prototype of a coordination factor on the default search, measured outside the
// package's scoring: each hit's score times (distinct query terms found in the tool's
// text / distinct query terms) ^ p, re-ranked; p 0 is the default. Dropped: see the
// tuning record in the README. Usage, after a build:
//   node bench/coordination.mjs '[0, 0.25, -0.1]'
import { ToolCatalog } from '@heretek/catalog';
import { figuresLine, sets } from './prototype-sets.mjs';
const collect = (schema, out, depth = 0) => {
  if (!schema || typeof schema !== 'object' || depth > 4) return;
  for (const [k, v] of Object.entries(schema.properties ?? {})) {
    out.push(k, v?.description ?? '', ...(v?.enum ?? []).map(String));
    collect(v, out, depth + 1);
    collect(v?.items, out, depth + 1);
  }
};
for (const p of JSON.parse(
  process.argv[2] ?? '[0, 0.1, 0.25, 0.5, 1, -0.1, -0.25, -0.5]',
)) {
  const row = [];
  for (const [name, data] of Object.entries(sets)) {
    const catalog = new ToolCatalog({
      tools: data.entries,
      tuning: { relativeCutoff: 0 },
    });
    const termsOf = new Map(
      data.entries.map((e) => {
        const parts = [e.name, e.target, e.description ?? ''];
        collect(e.inputSchema, parts);
        return [e.name, new Set(catalog.searchTerms(parts.join(' ')))];
      }),
    );
    const rankings = data.queries.map((q) => {
      const qs = [...new Set(catalog.searchTerms(q.query))];
      const hits = catalog.search({ query: q.query, limit: 200 }).hits;
      return hits
        .map((h) => {
          const ts = termsOf.get(h.name);
          const m = qs.filter((t) => ts?.has(t)).length;
          return [
            h.name,
            h.score * Math.pow(Math.max(1, m) / Math.max(1, qs.length), p),
          ];
        })
        .sort((a, b) => b[1] - a[1])
        .slice(0, 10)
        .map(([n]) => data.benchmarkName.get(n) ?? n);
    });
    row.push(figuresLine(name, data, rankings));
  }
  console.log('coord p', p, '|', row.join(' | '));
}
