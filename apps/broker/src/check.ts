import type { DiscoveryOutcome } from './types.js';

/** Exit codes of `heretek-lazy-broker --check`. */
export const CHECK_EXIT = {
  /** Every backend answered. */
  allAnswered: 0,
  /** Some backends failed. */
  someFailed: 1,
  /** The gateway cannot be reached, or the configuration is wrong. */
  unreachableOrInvalid: 2,
} as const;

/** Failure codes that mean nothing answered at the gateway's address at all. */
const UNREACHABLE_CODES = new Set(['CONNECTION_REFUSED']);

/**
 * The gateway is unreachable when every backend failed and every failure says
 * nothing answered at its address (a backend that is down behind a running
 * gateway fails with an HTTP status instead).
 */
export function gatewayUnreachable(
  outcomes: readonly DiscoveryOutcome[],
): boolean {
  return (
    outcomes.length > 0 &&
    outcomes.every(
      (o) =>
        !o.ok &&
        (UNREACHABLE_CODES.has(o.code ?? '') ||
          /ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH/.test(o.error)),
    )
  );
}

/** The `--check` report: one line per backend, then a summary line, and the exit code. */
export function checkReport(
  outcomes: readonly DiscoveryOutcome[],
  totalMs: number,
): { lines: string[]; exitCode: number } {
  const width = Math.max(6, ...outcomes.map((o) => o.target.length));
  const lines = outcomes.map((o) =>
    o.ok
      ? `  ok    ${o.target.padEnd(width)}  ${String(o.tools).padStart(5)} tools  ${o.ms} ms`
      : `  FAIL  ${o.target.padEnd(width)}  ${o.error} (${o.ms} ms)`,
  );
  const answered = outcomes.filter((o) => o.ok).length;
  if (gatewayUnreachable(outcomes)) {
    lines.push(
      `gateway unreachable: none of ${outcomes.length} backends could connect (${totalMs} ms). Is the gateway running at HERETEK_GATEWAY_URL?`,
    );
    return { lines, exitCode: CHECK_EXIT.unreachableOrInvalid };
  }
  lines.push(
    `${answered}/${outcomes.length} backends answered in ${totalMs} ms`,
  );
  return {
    lines,
    exitCode:
      answered === outcomes.length
        ? CHECK_EXIT.allAnswered
        : CHECK_EXIT.someFailed,
  };
}
