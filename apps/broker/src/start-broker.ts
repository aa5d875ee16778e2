import type { OpenedBroker } from './open-broker.js';

/** Why an opened broker cannot serve: its gateway client refused an option, or its pins file cannot be trusted. */
export type StartProblem = { kind: 'gateway' | 'pins'; error: unknown };

/**
 * Starts a broker that {@link openBroker} built, as the stdio server does:
 * discovery at once, the gateway client once the index cache is served, then
 * the pins file's check. Resolves once it serves, or with why it cannot (a
 * pins file that cannot be trusted is never overwritten: the broker stops).
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
