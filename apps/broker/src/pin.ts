import type { Backend } from '@heretek/catalog';
import type { BrokerConfig } from './config.js';
import { EXIT_CODES } from './exit-codes.js';
import { createGateway } from './gateway.js';
import { discoveryBroker, fail, out } from './one-shot.js';
import type { TrustLayer } from './trust/trust-layer.js';
import type { ToolGateway } from './types.js';

/** `--pin [tool | target]`: one discovery through the trust layer, then what is new or changed (hidden characters spelled out) on stderr, accepted into the pins file (every tool, one tool, or every tool of one target). Exit 0 when accepted, 1 when some backend failed (what the others listed is still accepted), 2 when nothing could be accepted. */
export async function runPin(
  config: BrokerConfig,
  backends: Backend[],
  tool: string | undefined,
): Promise<number> {
  const refuse = (problem: unknown) => {
    fail(problem);
    return EXIT_CODES.usage;
  };
  if (config.pinPolicy === 'off')
    return refuse(
      '--pin: HERETEK_PIN_POLICY is off, so no tool is pinned. Set it to refuse or warn.',
    );
  if (config.offline)
    return refuse(
      '--pin: the broker is offline (HERETEK_BROKER_OFFLINE=1); pins are taken from what the gateway lists. Unset HERETEK_BROKER_OFFLINE.',
    );
  const { TrustLayer, formatPendingPins } = await import('./trust/index.js');
  let trust: TrustLayer, gateway: ToolGateway;
  try {
    trust = await TrustLayer.open({
      policy: config.pinPolicy,
      pinsFile: config.pinsFile,
      pinsReadOnly: config.pinsReadOnly,
    });
    gateway = await createGateway(config);
  } catch (error) {
    return refuse(error);
  }
  const pins = trust.pins!;
  const broker = discoveryBroker(config, backends, gateway, trust);
  try {
    const outcomes = await broker.discover();
    const failed = outcomes.filter((o) => !o.ok);
    for (const o of failed)
      out(
        `backend ${o.target} did not answer (${o.error}); its tools were not reviewed`,
      );
    if (failed.length === outcomes.length)
      return refuse('--pin: no backend answered; nothing was accepted.');
    // The argument names a tool, or else a configured target: every tool of it.
    const selection: { tool?: string; target?: string } =
      tool === undefined
        ? {}
        : broker.catalog.get(tool) === undefined &&
            backends.some((backend) => backend.target === tool)
          ? { target: tool }
          : { tool };
    // Tools of backends seen for the first time were pinned by this discovery
    // (trust on first use) unless the file is read-only; they are named, not shown.
    const firstSeen = pins.firstSeen(selection);
    let accepted;
    try {
      out(formatPendingPins(pins.pending(selection)));
      accepted = await pins.accept(selection);
    } catch (error) {
      return refuse(error);
    }
    const count = (n: number, what: string) =>
      `${n} ${what}${n === 1 ? '' : 's'}`;
    if (firstSeen.length > 0)
      out(
        `${count(firstSeen.length, 'tool')} pinned on first sight: ${firstSeen.join(', ')}`,
      );
    const missing =
      failed.length > 0
        ? `; ${count(failed.length, 'backend')} did not answer`
        : '';
    out(
      `accepted ${count(accepted.length, 'tool')} into ${pins.path}${missing}`,
    );
    return failed.length > 0 ? EXIT_CODES.failure : EXIT_CODES.ok;
  } finally {
    await broker.close();
  }
}
