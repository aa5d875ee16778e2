import type { OpenedBroker } from './open-broker.js';

/** Why an opened broker cannot serve: its gateway client refused an option, or its pins file cannot be trusted. */
export type StartProblem = { kind: 'gateway' | 'pins'; error: unknown };

/**
 * Starts a broker that {@link openBroker} built, as the stdio server starts
 * it: discovery begins at once (each listing waits for the pins file), the
 * gateway client loads once the index cache's parts are served, and the pins
 * file's entries are checked. Resolves once it serves, or with why it cannot:
 * a pins file that cannot be trusted is never overwritten, the broker stops.
 */
export async function startBroker(
  opened: OpenedBroker,
): Promise<StartProblem | undefined> {
  const { broker, trust } = opened;
  broker.start();
  const gatewayProblem = await broker
    .cacheApplied()
    .then(() => opened.connectGateway?.())
    .then(
      () => undefined,
      (error: unknown) => error ?? 'the gateway client did not load',
    );
  if (gatewayProblem !== undefined)
    return { kind: 'gateway', error: gatewayProblem };
  // The pins file's entries are checked once the cached parts are served
  // (they are admitted on the pins' hashes); calls wait for the check.
  const pinsProblem = await trust
    ?.then(async (layer) => {
      await broker.cacheApplied();
      await layer.pins?.verified;
    })
    .then(
      () => undefined,
      (error: unknown) => ({ kind: 'pins' as const, error }),
    );
  return pinsProblem;
}
