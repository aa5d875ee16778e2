// The plugin's own start-up cost inside OpenCode's runtime: the time to
// import the built entry and to call `server()`, and the resident memory
// after each. Run it with OpenCode's binary acting as Bun:
//   BUN_BE_BUN=1 node_modules/opencode-ai/bin/opencode.exe bench/plugin-load.mjs
// (after `npx -y pnpm@12.4.2 build`). Plain `node bench/plugin-load.mjs` runs
// it in Node.
const rssMiB = () => Math.round(process.memoryUsage().rss / 1048576);
const before = rssMiB();
const started = performance.now();
const { default: plugin } = await import(
  new URL('../dist/index.js', import.meta.url).href
);
const imported = performance.now();
const afterImport = rssMiB();
await plugin.server(
  { client: { app: { log: async () => {} } }, directory: process.cwd() },
  {},
);
const called = performance.now();
console.log(
  JSON.stringify({
    rssBeforeMiB: before,
    importMs: Math.round(imported - started),
    rssAfterImportMiB: afterImport,
    serverMs: Math.round(called - imported),
    rssAfterServerMiB: rssMiB(),
  }),
);
