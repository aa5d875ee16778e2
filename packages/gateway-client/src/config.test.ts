import { describe, expect, it } from 'vitest';
import { gatewayConfigFromEnv, parseGatewayClientOptions } from './config.js';
import { GatewayConfigError, GatewayErrorCode } from './errors.js';
import { GatewayClient } from './gateway-client.js';

function failure(run: () => unknown): GatewayConfigError {
  try {
    run();
  } catch (error) {
    return error as GatewayConfigError;
  }
  throw new Error('expected a failure');
}

describe('gatewayConfigFromEnv', () => {
  it('applies the documented defaults', () => {
    expect(gatewayConfigFromEnv({})).toEqual({
      url: 'http://127.0.0.1:3000',
      mode: 'per-target',
      role: 'director',
      timeoutMs: 30_000,
    });
  });

  it('reads every variable', () => {
    expect(
      gatewayConfigFromEnv({
        HERETEK_GATEWAY_URL: 'https://gw.example:8443/base',
        HERETEK_GATEWAY_MODE: 'multiplexed',
        HERETEK_GATEWAY_TOKEN: 't0k',
        HERETEK_GATEWAY_TIMEOUT_MS: '1500',
        HERETEK_BROKER_ROLE: 'staff-backend',
        HERETEK_GATEWAY_MAX_RESPONSE_BYTES: '1024',
        HERETEK_GATEWAY_MAX_CONCURRENCY: '4',
      }),
    ).toEqual({
      url: 'https://gw.example:8443/base',
      mode: 'multiplexed',
      token: 't0k',
      timeoutMs: 1500,
      role: 'staff-backend',
      maxResponseBytes: 1024,
      maxConcurrentPerEndpoint: 4,
    });
  });

  it('treats empty values as unset', () => {
    expect(
      gatewayConfigFromEnv({
        HERETEK_GATEWAY_TOKEN: '',
        HERETEK_GATEWAY_MODE: ' ',
      }).token,
    ).toBeUndefined();
  });

  it.each([
    ['HERETEK_GATEWAY_URL', 'ftp://x'],
    ['HERETEK_GATEWAY_URL', 'not a url'],
    ['HERETEK_GATEWAY_MODE', 'both'],
    ['HERETEK_GATEWAY_TIMEOUT_MS', '-5'],
    ['HERETEK_GATEWAY_TIMEOUT_MS', '10s'],
    ['HERETEK_GATEWAY_MAX_RESPONSE_BYTES', '0'],
  ])('names %s in the error for %j', (variable, value) => {
    const error = failure(() => gatewayConfigFromEnv({ [variable]: value }));
    expect(error).toBeInstanceOf(GatewayConfigError);
    expect(error.code).toBe(GatewayErrorCode.InvalidConfig);
    expect(error.setting).toBe(variable);
    expect(error.message).toContain(variable);
  });
});

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
    expect(error.code).toBe(GatewayErrorCode.InvalidTargetName);
    await client.close();
  });
});
