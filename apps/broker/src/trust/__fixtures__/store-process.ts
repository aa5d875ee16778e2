// Test fixture: the pin store compiled from the source tree, and a script
// that runs one scenario with it in a real child process on a real pins file
// (see SCENARIOS below). The scenarios use only the store's public methods.
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { compileModules } from '../../__fixtures__/compile-modules.js';

const SCENARIOS = `
import { statSync } from 'node:fs';
import { PinStore } from './trust/pin-store.js';

/** Tool \`index\` of backend \`target\`, in its \`version\`th definition. */
const tool = (target, index, version = 1) => ({
  name: target + '_tool_' + String(index).padStart(5, '0'),
  description: 'Tool ' + index + ' of ' + target + ', version ' + version + '.',
  inputSchema: { type: 'object' },
});
const listing = (target, count, version = 1) =>
  Array.from({ length: Number(count) }, (_, index) => tool(target, index, version));

/** Calls \`step(k)\` now and once every turn of the event loop until \`done()\`; how many calls. */
async function eachTurnUntil(done, step) {
  let count = 0;
  for (; !done(); count += 1) {
    step(count);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return count;
}
/** Whether \`promise\` has settled, as a function. */
function settled(promise) {
  let over = false;
  promise.finally(() => (over = true)).catch(() => {});
  return () => over;
}

const scenarios = {
  /** Pins the first listing of \`target\` (\`count\` tools). */
  async pin(store, file, target, count) {
    return store.observe(listing(target, count));
  },
  /**
   * Lists backend "cam" for the first time, which writes its pin, and each
   * turn until that write has replaced the file, lists cam_tool_00000 in a
   * new version and accepts it: the last accept is made while the write
   * runs, after it took the pins to write.
   */
  async 'accept during write'(store, file) {
    const { ino } = statSync(file);
    const written = store.observe(listing('cam', 1, 0));
    const accepts = [];
    const replaced = () => statSync(file).ino !== ino;
    const version = await eachTurnUntil(replaced, (turn) => {
      void store.observe(listing('cam', 1, turn + 1));
      accepts.push(store.accept({ tool: 'cam_tool_00000' }));
    });
    await Promise.all([written, ...accepts]);
    await store.flush();
    return { version, state: store.status('cam_tool_00000')?.state };
  },
  /**
   * Lists backend "adb" changed (version 2 of what another process pinned),
   * then, in one turn, a backend listed for the first time (a write of its
   * pins is queued) and the acceptance of adb_tool_00001.
   */
  async 'accept while queued'(store) {
    await store.observe(listing('adb', 3, 2));
    const written = store.observe(listing('cam', 1));
    const accepted = store.accept({ tool: 'adb_tool_00001' });
    await Promise.all([written, accepted]);
    await store.flush();
    return { state: store.status('adb_tool_00001')?.state };
  },
  /**
   * Says "ready" and waits for "go" (meanwhile another process changes the
   * file); then lists backend "x" for the first time, whose write reads the
   * changed file again, and each turn of that write lists one more backend
   * for the first time.
   */
  async 'pin during reload'(store) {
    await new Promise((resolve) => {
      process.once('message', resolve);
      process.send('ready');
    });
    const written = store.observe(listing('x', 1));
    const targets = [];
    await eachTurnUntil(settled(written), (turn) => {
      targets.push('y' + turn);
      void store.observe(listing('y' + turn, 1));
    });
    await store.flush();
    const states = targets.map((target) => store.status(target + '_tool_00000')?.state);
    return { targets, states };
  },
};

const [scenario, file, ...args] = process.argv.slice(2);
const store = await PinStore.open({
  path: file,
  log: (line) => process.stderr.write(line + '\\n'),
});
const result = await scenarios[scenario](store, file, ...args);
process.send({ result: result ?? {} }, () => process.disconnect());
`;

/** A scenario running in its own process: `ready` once it says so (if it does), `go()` to let it on, `done` with what it sent back. */
export type StoreProcess = {
  ready: Promise<void>;
  go: () => void;
  done: Promise<Record<string, unknown>>;
};

/**
 * Compiles the pin store into `directory` and writes the scenarios' script;
 * returns a function that starts one scenario on `file` in a new process
 * (`done` rejects, with its stderr, when the process fails).
 */
export async function storeProcesses(
  directory: string,
): Promise<
  (scenario: string, file: string, ...args: string[]) => StoreProcess
> {
  await compileModules(directory, ['trust/pin-store.ts']);
  const script = path.join(directory, 'scenarios.js');
  await writeFile(script, SCENARIOS);
  return (scenario, file, ...args) => {
    const child = spawn(process.execPath, [script, scenario, file, ...args], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    let result: Record<string, unknown> | undefined;
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
    const ready = new Promise<void>((resolve) =>
      child.on(
        'message',
        (message: 'ready' | { result: Record<string, unknown> }) => {
          if (message === 'ready') resolve();
          else result = message.result;
        },
      ),
    );
    const done = new Promise<Record<string, unknown>>((resolve, reject) =>
      child.once('close', (code) =>
        code === 0 && result !== undefined
          ? resolve(result)
          : reject(new Error(`${scenario} exited ${code}: ${stderr}`)),
      ),
    );
    return { ready, go: () => child.send('go'), done };
  };
}
