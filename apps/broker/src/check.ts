import type { Backend } from '@heretek/catalog';
import type { GatewayErrorCode } from '@heretek/gateway-client';
import type { BrokerConfig } from './config.js';
import { EXIT_CODES } from './exit-codes.js';
import { createGateway } from './gateway.js';
import { discoveryBroker, fail, out } from './one-shot.js';
import type { TrustLayer } from './trust/trust-layer.js';
import type { DiscoveryOutcome, ToolGateway } from './types.js';
import { UsageLearning } from './usage/usage-learning.js';

/** The gateway client's code for "nothing answers at the gateway's address at all" (the type keeps it a live code). */
const UNREACHABLE: GatewayErrorCode = 'CONNECTION_REFUSED';

/** Every backend failed, each because nothing answered at its address (one down behind a running gateway fails with an HTTP status). */
export function gatewayUnreachable(
  outcomes: readonly DiscoveryOutcome[],
): boolean {
  return (
    outcomes.length > 0 &&
    outcomes.every(
      (o) =>
        !o.ok &&
        (o.code === UNREACHABLE ||
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
    return { lines, exitCode: EXIT_CODES.usage };
  }
  lines.push(
    `${answered}/${outcomes.length} backends answered in ${totalMs} ms`,
  );
  const all = answered === outcomes.length;
  return { lines, exitCode: all ? EXIT_CODES.ok : EXIT_CODES.failure };
}

/** `--check` (see the `--help` text): one discovery, a report line per backend, an exit code. */
export async function runCheck(
  config: BrokerConfig,
  backends: Backend[],
): Promise<number> {
  // The pins file is read, never written: --check pins nothing on its own.
  const { TrustLayer, describePins } = await import('./trust/index.js');
  let trust: TrustLayer | undefined;
  try {
    trust = await TrustLayer.open({
      policy: config.pinPolicy,
      pinsFile: config.pinsFile,
      pinsReadOnly: true,
    });
  } catch (error) {
    fail(error);
    return EXIT_CODES.usage;
  }
  const learning = new UsageLearning({ file: config.usageFile });
  const reportFiles = async () => {
    out(
      trust.pins === undefined
        ? `pins: off (HERETEK_PIN_POLICY=off): no tool is pinned or checked`
        : `${describePins(trust.pins)}; policy ${trust.policy}${config.pinsReadOnly ? ', HERETEK_PINS_READ_ONLY=1' : ''}`,
    );
    out(await learning.describe());
  };
  if (config.offline) {
    out(
      `configuration valid; offline (HERETEK_BROKER_OFFLINE=1): ${backends.length} backends from the seed catalog, no gateway to check`,
    );
    await reportFiles();
    return EXIT_CODES.ok;
  }
  let gateway: ToolGateway;
  try {
    gateway = await createGateway(config);
  } catch (error) {
    fail(error);
    return EXIT_CODES.usage;
  }
  out(
    `checking gateway ${config.gatewayUrl} (${config.gatewayMode}), role ${config.role}, ${backends.length} backends`,
  );
  const broker = discoveryBroker(config, backends, gateway, trust);
  const started = performance.now();
  try {
    const outcomes = await broker.discover();
    const report = checkReport(
      outcomes,
      Math.round(performance.now() - started),
    );
    for (const line of report.lines) out(line);
    await reportFiles();
    return report.exitCode;
  } finally {
    await broker.close();
  }
}
