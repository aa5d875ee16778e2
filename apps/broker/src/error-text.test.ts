import { describe, expect, it } from 'vitest';
import { BrokerError } from './errors.js';
import { errorText } from './error-text.js';

describe('errorText', () => {
  it('adds a family error code the message does not name', () => {
    const error = new BrokerError({
      code: 'UNKNOWN_TOOL',
      message: 'No such tool.',
    });
    expect(errorText(error)).toBe('No such tool. (UNKNOWN_TOOL)');
  });
  it('keeps an errno message that already names its code as it is', () => {
    const error = Object.assign(
      new Error("EACCES: permission denied, open 'x'"),
      {
        code: 'EACCES',
      },
    );
    expect(errorText(error)).toBe("EACCES: permission denied, open 'x'");
  });
  it('writes a thrown non-error as a string', () => {
    expect(errorText('plain')).toBe('plain');
    expect(errorText(undefined)).toBe('undefined');
  });
});
