// Test fixture: the GloVe embeddings endpoint (bench/glove-endpoint.mjs, an
// OpenAI-compatible /embeddings on 127.0.0.1) as a child process.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ENDPOINT = fileURLToPath(
  new URL('../../bench/glove-endpoint.mjs', import.meta.url),
);

/** A running endpoint: its base URL, the inputs of each request it logged, and `stop` (resolves once it exited, its port free again). */
export type GloveEndpoint = {
  url: string;
  requests: { inputs: number }[];
  stop: () => Promise<void>;
};

export async function startGloveEndpoint(): Promise<GloveEndpoint> {
  const child = spawn(process.execPath, [ENDPOINT], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  const { url } = JSON.parse(line) as { url: string };
  const requests: GloveEndpoint['requests'] = [];
  lines.on('line', (logged: string) =>
    requests.push({
      inputs: (JSON.parse(logged) as { inputs: number }).inputs,
    }),
  );
  const exited = once(child, 'exit');
  return {
    url,
    requests,
    stop: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
