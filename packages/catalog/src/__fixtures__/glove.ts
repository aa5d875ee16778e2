// Test fixture: starts glove-endpoint.mjs (an OpenAI-compatible embeddings
// endpoint serving GloVe vectors) as a child process on 127.0.0.1.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ENDPOINT = fileURLToPath(
  new URL('../../../catalog-lab/bench/glove-endpoint.mjs', import.meta.url),
);

/** A running endpoint: its base URL and every request it answered, as it logged them. */
export type GloveEndpoint = {
  url: string;
  child: ChildProcess;
  requests: Array<{ inputs: number; authorization: string | null }>;
  /** Resolves once the endpoint has logged `count` requests (its log line can come after its answer). */
  logged: (count: number) => Promise<void>;
  stop: () => Promise<void>;
};

/** Starts the endpoint (`--delay-ms <n>`, `--garbage` as extra arguments). */
export function startGloveEndpoint(
  args: readonly string[] = [],
): Promise<GloveEndpoint> {
  const child = spawn(process.execPath, [ENDPOINT, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const requests: GloveEndpoint['requests'] = [];
  const waiting = new Set<() => void>();
  const logged = (count: number): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (requests.length < count) return;
        waiting.delete(check);
        resolve();
      };
      waiting.add(check);
      check();
    });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`glove endpoint exited with ${code}`)),
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const message = JSON.parse(line) as {
        url?: string;
        inputs?: number;
        authorization?: string | null;
      };
      if (message.url !== undefined)
        resolve({ url: message.url, child, requests, logged, stop });
      else {
        requests.push({
          inputs: message.inputs ?? 0,
          authorization: message.authorization ?? null,
        });
        for (const check of [...waiting]) check();
      }
    });
  });
}

/** A loopback base URL where nothing listens (a port that was free a moment ago). */
export function closedUrl(): Promise<string> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(`http://127.0.0.1:${port}/v1`));
    });
  });
}
