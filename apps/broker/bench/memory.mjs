// What the broker keeps per tool and per backend, once discovery is done,
// over the stand-in gateway (BACKENDS targets x TOOLS tools, loopback): the
// broker's heap after a full GC (heap probe, fixtures/heap-probe.cjs) in
// four runs that each add one part, and the catalog alone in this process.
//
// - offline: the broker with nothing discovered (the floor);
// - pins off: + the catalog, discovery and the gateway client;
// - pins on: + the trust layer (pins, cleaned descriptions, flags);
// - streams: the same with one standalone GET stream per backend held for
//   tools/list_changed (HERETEK_GATEWAY_MAX_STREAMS=BACKENDS; the runs
//   before hold one).
//
// The stand-in gateway is fixtures/table-gateway.mjs (every route
// sessionful, with streams).
//
//   BACKENDS=300 TOOLS=100 node --expose-gc bench/memory.mjs
import { readdirSync, readlinkSync, writeFileSync, mkdtempSync } from 'node:fs';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolCatalog, toolEntryFromMcpTool } from '@heretek/catalog';
import * as lib from './lib.mjs';

lib.requireBuilt();
const BACKENDS = lib.intFromEnv('BACKENDS', 300);
const TOOLS = lib.intFromEnv('TOOLS', 100);
const PROBE = fileURLToPath(
  new URL('./fixtures/heap-probe.cjs', import.meta.url),
);

const targets = Array.from(
  { length: BACKENDS },
  (_, i) => `m${String(i).padStart(4, '0')}`,
);
const work = mkdtempSync(join(tmpdir(), 'heretek-bench-memory-'));
const backendsFile = join(work, 'backends.json');
writeFileSync(
  backendsFile,
  JSON.stringify(
    targets.map((t) => ({ backend: t, target: t, profile: 'core' })),
  ),
);

/** Sockets a process holds open, from /proc (Linux). */
function sockets(pid) {
  let count = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) count++;
    } catch {
      // closed in between
    }
  }
  return count;
}

/** Starts a broker with the heap probe, waits for discovery, and reads its heap. */
async function brokerHeap(label, env, { streams = 1 } = {}) {
  const gateway = await lib.spawnGateway(
    Object.fromEntries(targets.map((t) => [t, { extraTools: TOOLS - 1 }])),
    { script: 'table-gateway.mjs' },
  );
  const broker = lib.spawnBroker(
    {
      HERETEK_GATEWAY_URL: gateway.url,
      HERETEK_BACKENDS_FILE: backendsFile,
      HERETEK_USAGE_FILE: 'off',
      HERETEK_INDEX_CACHE_FILE: 'off',
      HERETEK_GATEWAY_TIMEOUT_MS: '120000',
      XDG_STATE_HOME: mkdtempSync(join(work, 'state-')),
      HERETEK_GATEWAY_MAX_STREAMS: String(streams),
      ...env,
    },
    { nodeArgs: ['--expose-gc', '--require', PROBE] },
  );
  await broker.initialize();
  const deadline = Date.now() + 600_000;
  while (
    !env.HERETEK_BROKER_OFFLINE &&
    !/discovery: \d+\/\d+ backends listed/.test(broker.stderr())
  ) {
    if (Date.now() > deadline)
      throw new Error(`${label}: discovery did not end`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await new Promise((r) => setTimeout(r, 1_500));
  broker.child.kill('SIGUSR2');
  let heap;
  while (heap === undefined) {
    await new Promise((r) => setTimeout(r, 100));
    const line = /HEAP_PROBE (.*)/.exec(broker.stderr())?.[1];
    if (line) heap = JSON.parse(line);
  }
  const open = sockets(broker.child.pid);
  await broker.close();
  await gateway.close();
  return {
    label,
    heapUsedMb: lib.round(heap.heapUsed / 2 ** 20, 1),
    rssMb: lib.round(heap.rss / 2 ** 20, 1),
    sockets: open,
  };
}

/** The catalog alone, in this process: heap per tool once every listing is in. */
function catalogHeap() {
  const listings = new Map(
    targets.map((target) => [
      target,
      Array.from({ length: TOOLS }, (_, i) =>
        toolEntryFromMcpTool({
          backend: { backend: target, target, profile: 'core' },
          tool: {
            name: i === 0 ? 'echo' : `tool_${i - 1}`,
            description: `Placeholder tool ${i - 1} of ${target} for listing size`,
            inputSchema: {
              type: 'object',
              properties: { x: { type: 'string' } },
            },
            annotations: { readOnlyHint: true },
          },
          source: 'discovered',
        }),
      ),
    ]),
  );
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  const catalog = new ToolCatalog();
  catalog.replaceBackends(listings);
  globalThis.gc?.();
  const after = process.memoryUsage().heapUsed;
  return {
    tools: catalog.size,
    heapMb: lib.round((after - before) / 2 ** 20, 1),
  };
}

try {
  const tools = BACKENDS * TOOLS;
  const catalog = catalogHeap();
  const runs = [];
  runs.push(await brokerHeap('offline', { HERETEK_BROKER_OFFLINE: '1' }));
  runs.push(await brokerHeap('pins off', { HERETEK_PIN_POLICY: 'off' }));
  runs.push(await brokerHeap('pins on', { HERETEK_PIN_POLICY: 'refuse' }));
  runs.push(
    await brokerHeap(
      'pins on, a stream per backend',
      { HERETEK_PIN_POLICY: 'refuse' },
      { streams: BACKENDS },
    ),
  );
  const [offline, pinsOff, pinsOn, live] = runs;
  const perTool = (mb) => lib.round((mb * 2 ** 20) / tools, 0);
  const catalogBytes = (catalog.heapMb * 2 ** 20) / tools;
  console.log(
    JSON.stringify(
      {
        bench: 'memory',
        machine: lib.machine(),
        backends: BACKENDS,
        toolsPerBackend: TOOLS,
        runs,
        bytesPerTool: {
          catalogAlone: lib.round(catalogBytes, 0),
          catalogDiscoveryAndGatewayClient: perTool(
            pinsOff.heapUsedMb - offline.heapUsedMb,
          ),
          trustLayer: perTool(pinsOn.heapUsedMb - pinsOff.heapUsedMb),
        },
        standaloneStreams: {
          extraSockets: live.sockets - pinsOn.sockets,
          heapPerBackendKb: lib.round(
            ((live.heapUsedMb - pinsOn.heapUsedMb) * 1024) / (BACKENDS - 1),
            1,
          ),
          rssPerBackendKb: lib.round(
            ((live.rssMb - pinsOn.rssMb) * 1024) / (BACKENDS - 1),
            1,
          ),
        },
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
