/**
 * The broker's diagnostics go to stderr, one line each, prefixed so they can
 * be told apart from a client's own output. stdout carries only the protocol.
 */
export function stderrLogger(prefix = 'heretek-lazy-broker'): (line: string) => void {
  return (line) => {
    process.stderr.write(`[${prefix}] ${line}\n`);
  };
}
