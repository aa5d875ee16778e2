import { HandoffValidationError } from '../index.js';

/** The HandoffValidationError `fn` throws; any other throw, or none, fails the test. */
export function validationError(fn: () => unknown): HandoffValidationError {
  try {
    fn();
  } catch (error) {
    if (HandoffValidationError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a throw');
}
