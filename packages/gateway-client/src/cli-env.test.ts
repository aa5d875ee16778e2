import { describe, expect, it } from 'vitest';
import { gatewayOptionsFromEnv } from './cli-env.js';
import { GatewayConfigError, GatewayErrorCode } from './errors.js';
import { failure } from './__fixtures__/failure.js';

describe('gatewayOptionsFromEnv', () => {
  it('applies the documented defaults', () => {
    expect(gatewayOptionsFromEnv({})).toEqual({
      url: 'http://127.0.0.1:3000',
      mode: 'per-target',
      role: 'director',
      timeoutMs: 30_000,
    });
  });

  it('reads every variable', () => {
    expect(
      gatewayOptionsFromEnv({
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
      gatewayOptionsFromEnv({
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
    ['HERETEK_GATEWAY_URL', 'http://u:p@127.0.0.1:3000'],
    ['HERETEK_GATEWAY_URL', 'http://127.0.0.1:3000/mcp'],
  ])('names %s in the error for %j', (variable, value) => {
    const error = failure(() => gatewayOptionsFromEnv({ [variable]: value }));
    expect(error).toBeInstanceOf(GatewayConfigError);
    expect(error.code).toBe(GatewayErrorCode.InvalidConfig);
    expect(error.setting).toBe(variable);
    expect(error.message).toContain(variable);
  });

  it('never shows the token value, and words option problems as the variable', () => {
    const error = failure(() =>
      gatewayOptionsFromEnv({ HERETEK_GATEWAY_URL: 'http://u:s3cret@h' }),
    );
    expect(error.setting).toBe('HERETEK_GATEWAY_URL');
    expect(error.message).toContain('HERETEK_GATEWAY_TOKEN');
    expect(error.message).not.toContain("option 'url'");
  });
});
