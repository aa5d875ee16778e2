// Test fixture: the catalog's loopback embeddings endpoint (GloVe vectors of
// its benchmark sets' words, OpenAI-compatible /embeddings on 127.0.0.1), run
// as a child process the test can kill.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const ENDPOINT = fileURLToPath(
  new URL(
    '../../../../packages/catalog-lab/bench/glove-endpoint.mjs',
    import.meta.url,
  ),
);

export type EmbeddingsEndpoint = {
  /** Base URL (`http://127.0.0.1:<port>/v1`). */
  url: string;
  process: ChildProcess;
  /** Requests and inputs answered so far (asked of the endpoint itself). */
  stats: () => Promise<{ requests: number; inputs: number }>;
  /** One-input requests so far, by their text. */
  single: () => Promise<Record<string, number>>;
  /** Holds each answer back `ms` from now on (0: answers at once). */
  setDelay: (ms: number) => Promise<void>;
  /** Kills it (SIGKILL) and waits until it is gone. */
  kill: () => Promise<void>;
};

/** Starts the endpoint; `args` as glove-endpoint.mjs takes them (`--delay-ms`, `--garbage`). */
export async function startEmbeddingsEndpoint(
  args: readonly string[] = [],
): Promise<EmbeddingsEndpoint> {
  const child = spawn(process.execPath, [ENDPOINT, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout!.setEncoding('utf8');
  const [first] = (await once(child.stdout!, 'data')) as [string];
  const { url } = JSON.parse(first.split('\n')[0]!) as { url: string };
  child.stdout!.resume();
  const stats = async () =>
    (await (await fetch(`${url}/stats`)).json()) as {
      requests: number;
      inputs: number;
      single: Record<string, number>;
    };
  return {
    url,
    process: child,
    stats: async () => {
      const { requests, inputs } = await stats();
      return { requests, inputs };
    },
    single: async () => (await stats()).single,
    setDelay: async (ms) => {
      const response = await fetch(`${url}/delay`, {
        method: 'POST',
        body: JSON.stringify({ ms }),
      });
      if (!response.ok) throw new Error(`delay: HTTP ${response.status}`);
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = once(child, 'exit');
      child.kill('SIGKILL');
      await gone;
    },
  };
}
