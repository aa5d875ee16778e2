// Test helper: the BrokerError a broker operation is refused with.
import { BrokerError } from '../errors.js';

/** Awaits `promise` and returns the BrokerError it rejects with; fails otherwise. */
export async function refusal(promise: Promise<unknown>): Promise<BrokerError> {
  try {
    await promise;
  } catch (error) {
    if (BrokerError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a BrokerError');
}
