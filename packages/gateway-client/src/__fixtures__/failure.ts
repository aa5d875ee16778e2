import type { GatewayConfigError } from '../errors.js';

/** What `run` throws; a run that does not throw fails the test. */
export function failure(run: () => unknown): GatewayConfigError {
  try {
    run();
  } catch (error) {
    return error as GatewayConfigError;
  }
  throw new Error('expected a failure');
}
