import { describe, expect, it } from 'vitest';
import {
  GatewayConfigError,
  GatewayError,
  GatewayErrorCode,
  GatewayTimeoutError,
} from './errors.js';
import { splitMultiplexedName, validateTargetName } from './target-name.js';

describe('validateTargetName', () => {
  it.each(['ghidra', 'radare2', 'my-server', 'a.b-c.9', 'x'.repeat(253)])(
    'accepts %s',
    (name) => {
      expect(validateTargetName(name)).toBe(name);
    },
  );

  it.each([
    ['my_server', "'_' is reserved"],
    ['a+b', "'+' is reserved"],
    ['Ghidra', 'characters other than'],
    ['', 'empty'],
    ['with space', 'characters other than'],
    ['x'.repeat(254), '254 characters'],
  ])(
    'rejects %j with a clear INVALID_CONFIG error naming the target',
    (name, why) => {
      const error = (() => {
        try {
          validateTargetName(name);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(GatewayConfigError);
      expect(GatewayError.isInstance(error)).toBe(true);
      expect(GatewayConfigError.isInstance(error)).toBe(true);
      expect(GatewayTimeoutError.isInstance(error)).toBe(false);
      expect(GatewayError.isInstance(new Error('plain'))).toBe(false);
      expect((error as GatewayError).code).toBe(GatewayErrorCode.InvalidConfig);
      expect((error as Error).message).toContain(why);
    },
  );
});

describe('splitMultiplexedName', () => {
  it('splits at the first underscore, as agentgateway does', () => {
    expect(splitMultiplexedName('fs_read_file')).toEqual({
      target: 'fs',
      tool: 'read_file',
    });
    expect(splitMultiplexedName('gh.v2_list')).toEqual({
      target: 'gh.v2',
      tool: 'list',
    });
  });
  it.each(['noprefix', '_lead', 'trail_', 'Upper_tool'])(
    'does not split %s',
    (name) => {
      expect(splitMultiplexedName(name)).toBeUndefined();
    },
  );
});
