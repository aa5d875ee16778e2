/**
 * The broker's diagnostics go to stderr, one line each, prefixed so they can
 * be told apart from a client's own output. stdout carries only the protocol.
 * A closed stderr (the client went away) never turns into an error: the line
 * is dropped.
 */
export function stderrLogger(): (line: string) => void {
  process.stderr.on('error', () => {});
  return (line) => {
    if (process.stderr.destroyed || !process.stderr.writable) return;
    try {
      process.stderr.write(`[heretek-lazy-broker] ${line}\n`);
    } catch {
      // Nowhere left to report to.
    }
  };
}
