import { HandoffValidationError } from '../index.js';

/** What `fn` throws; a call that returns fails the test. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** The HandoffValidationError `fn` throws; any other throw, or none, fails the test. */
export function validationError(fn: () => unknown): HandoffValidationError {
  const error = thrown(fn);
  if (HandoffValidationError.isInstance(error)) return error;
  throw error;
}
