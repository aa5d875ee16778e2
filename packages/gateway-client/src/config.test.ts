import { describe, expect, it } from 'vitest';
import { GATEWAY_MODES, parseGatewayClientOptions } from './config.js';
import type { GatewayConfigError } from './errors.js';
import { GatewayErrorCode } from './errors.js';
import { GatewayClient } from './gateway-client.js';
import { failure } from './__fixtures__/failure.js';

describe('client options', () => {
  it('rejects unknown and wrong options by name', () => {
    const error = failure(() =>
      parseGatewayClientOptions({
        url: 'http://127.0.0.1:1',
        mode: 'per-target',
        role: 'director',
        timeoutMs: 0,
      }),
    );
    expect(error.setting).toBe('timeoutMs');
    const unknown = failure(
      () =>
        new GatewayClient({
          url: 'http://127.0.0.1:1',
          mode: 'per-target',
          role: 'director',
          tiemout: 5,
        } as never),
    );
    expect(unknown.code).toBe(GatewayErrorCode.InvalidConfig);
  });

  it('rejects a target with an underscore before sending anything', async () => {
    const client = new GatewayClient({
      url: 'http://127.0.0.1:1',
      mode: 'multiplexed',
      role: 'director',
    });
    const error = (await client
      .callTool({ target: 'my_target', tool: 'x', arguments: {} })
      .catch((caught: unknown) => caught)) as GatewayConfigError;
    expect(error.code).toBe(GatewayErrorCode.InvalidConfig);
    await client.close();
  });

  it.each([
    ['http://user:pass@127.0.0.1:3000', 'credentials'],
    ['http://user@127.0.0.1:3000', 'credentials'],
    ['http://127.0.0.1:3000/mcp', 'without the trailing /mcp'],
    ['http://127.0.0.1:3000/base/mcp/', 'without the trailing /mcp'],
    ['ftp://127.0.0.1', 'http:// or https://'],
  ])('refuses url %s, naming the option', (url, why) => {
    const error = failure(() =>
      parseGatewayClientOptions({ url, mode: 'per-target', role: 'director' }),
    );
    expect(error.code).toBe(GatewayErrorCode.InvalidConfig);
    expect(error.setting).toBe('url');
    expect(error.message).toContain("option 'url'");
    expect(error.message).toContain(why);
    expect(error.message).not.toContain('HERETEK_');
    expect(error.message).not.toContain('pass@');
  });

  it('accepts a base path that merely contains mcp, and any role string', () => {
    expect(
      parseGatewayClientOptions({
        url: 'http://127.0.0.1:3000/mcp-gateway',
        mode: 'multiplexed',
        role: 'nobody',
      }).role,
    ).toBe('nobody');
    expect(GATEWAY_MODES).toEqual(['per-target', 'multiplexed']);
  });
});

describe('callTool options', () => {
  it.each([
    [{ task: 'yes' }, 'task'],
    [{ task: { ttlMs: -1 } }, 'task.ttlMs'],
    [{ task: { ttlMs: 1.5 } }, 'task.ttlMs'],
    [{ onProgress: 'log' }, 'onProgress'],
    [{ maxTotalTimeoutMs: 0 }, 'maxTotalTimeoutMs'],
  ])(
    'refuses %j before sending anything, naming %s',
    async (extra, setting) => {
      const client = new GatewayClient({
        url: 'http://127.0.0.1:1',
        mode: 'per-target',
        role: 'director',
      });
      const error = (await client
        .callTool({
          target: 'alpha',
          tool: 'echo',
          arguments: {},
          ...(extra as object),
        })
        .catch((caught: unknown) => caught)) as GatewayConfigError;
      expect(error.code).toBe(GatewayErrorCode.InvalidConfig);
      expect(error.setting).toBe(setting);
      expect(error.message).toContain(setting);
      await client.close();
    },
  );

  it('refuses a constructor callback that is not a function', () => {
    const error = failure(
      () =>
        new GatewayClient({
          url: 'http://127.0.0.1:1',
          mode: 'per-target',
          role: 'director',
          onLog: 'stderr',
        } as never),
    );
    expect(error.setting).toBe('onLog');
    expect(error.message).toContain('must be a function');
  });
});
