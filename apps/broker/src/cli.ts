#!/usr/bin/env node
import * as nodeModule from 'node:module';

// Node >= 22.1 can keep compiled code between runs (ignored where absent);
// it shortens every later cold start. Loaded before the rest of the bin.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

const { runServer } = await import('./run.js');

runServer({ argv: process.argv.slice(2), env: process.env }).then(
  (code) => {
    // Serving has ended (or a one-shot command finished): exit once what was
    // written to stdout has been handed over, even if stdin is still open.
    // Ending the stream flushes it and writes nothing of its own.
    process.exitCode = code;
    if (process.stdout.destroyed || !process.stdout.writable)
      process.exit(code);
    else process.stdout.end(() => process.exit(code));
  },
  (error: unknown) => {
    process.stderr.write(
      `heretek-lazy-broker: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
