import { describe, expect, it } from 'vitest';
import {
  BrokerConfigError,
  environmentHelp,
  loadBrokerConfig,
} from './config.js';
import { createGateway } from './gateway.js';

describe('loadBrokerConfig', () => {
  it('gives the documented defaults for an empty environment (read-only director, per-target)', () => {
    expect(loadBrokerConfig({})).toEqual({
      gatewayUrl: 'http://127.0.0.1:3000',
      gatewayMode: 'per-target',
      gatewayToken: undefined,
      gatewayTimeoutMs: 30_000,
      gatewayMaxStreams: 100,
      role: 'director',
      discoveryTtlMs: 300_000,
      offline: false,
      defaultProfile: undefined,
      backendsFile: undefined,
      skillsRoot: undefined,
      pinsFile: expect.stringMatching(/[/\\]heretek[/\\]pins\.json$/),
      pinPolicy: 'refuse',
      pinsReadOnly: false,
      resultGuard: true,
      usageFile: expect.stringMatching(/[/\\]heretek[/\\]usage\.jsonl$/),
      indexCacheFile: expect.stringMatching(
        /[/\\]heretek[/\\]index-cache\.bin$/,
      ),
      embeddings: undefined,
    });
  });

  it('reads the embeddings endpoint, its knobs and its cache file', () => {
    expect(
      loadBrokerConfig({
        XDG_STATE_HOME: '/srv/state',
        HERETEK_EMBEDDINGS_URL: 'http://127.0.0.1:11434/v1/',
        HERETEK_EMBEDDINGS_MODEL: 'nomic-embed-text',
      }).embeddings,
    ).toEqual({
      url: 'http://127.0.0.1:11434/v1',
      model: 'nomic-embed-text',
      key: undefined,
      weight: 0.3,
      queryTimeoutMs: 1000,
      cacheFile: '/srv/state/heretek/embeddings.json',
    });
    expect(
      loadBrokerConfig({
        HERETEK_EMBEDDINGS_URL: 'https://api.openai.com/v1',
        HERETEK_EMBEDDINGS_MODEL: 'text-embedding-3-small',
        HERETEK_EMBEDDINGS_KEY: 'sk-abc',
        HERETEK_EMBEDDINGS_WEIGHT: '0.5',
        HERETEK_EMBEDDINGS_TIMEOUT_MS: '250',
        HERETEK_EMBEDDINGS_CACHE_FILE: 'off',
      }).embeddings,
    ).toMatchObject({
      key: 'sk-abc',
      weight: 0.5,
      queryTimeoutMs: 250,
      cacheFile: 'off',
    });
  });

  it('names each bad embeddings variable, says what to fix, and never echoes the key', () => {
    const issues = (env: Record<string, string>): string => {
      try {
        loadBrokerConfig(env);
      } catch (error) {
        expect(BrokerConfigError.isInstance(error)).toBe(true);
        return (error as BrokerConfigError).issues.join('\n');
      }
      throw new Error('accepted');
    };
    const model = { HERETEK_EMBEDDINGS_MODEL: 'm' };
    expect(
      issues({ HERETEK_EMBEDDINGS_URL: 'localhost:11434', ...model }),
    ).toMatch(/HERETEK_EMBEDDINGS_URL: must be http or https/);
    expect(
      issues({ HERETEK_EMBEDDINGS_URL: 'http://h/v1/embeddings', ...model }),
    ).toMatch(
      /HERETEK_EMBEDDINGS_URL: is the base URL: leave \/embeddings off/,
    );
    expect(issues({ HERETEK_EMBEDDINGS_URL: 'http://h/v1' })).toMatch(
      /HERETEK_EMBEDDINGS_MODEL: required with HERETEK_EMBEDDINGS_URL/,
    );
    expect(issues(model)).toMatch(
      /HERETEK_EMBEDDINGS_URL: unset, but HERETEK_EMBEDDINGS_MODEL is set/,
    );
    const url = { HERETEK_EMBEDDINGS_URL: 'http://h/v1', ...model };
    expect(issues({ ...url, HERETEK_EMBEDDINGS_WEIGHT: '1.5' })).toMatch(
      /HERETEK_EMBEDDINGS_WEIGHT must be a number from 0 to 1/,
    );
    expect(issues({ ...url, HERETEK_EMBEDDINGS_TIMEOUT_MS: 'soon' })).toMatch(
      /HERETEK_EMBEDDINGS_TIMEOUT_MS must be a whole number/,
    );
    expect(issues({ ...url, HERETEK_EMBEDDINGS_KEY: '' })).toMatch(
      /HERETEK_EMBEDDINGS_KEY is set but empty/,
    );
    const spaced = issues({ ...url, HERETEK_EMBEDDINGS_KEY: 'sk secret' });
    expect(spaced).toMatch(
      /HERETEK_EMBEDDINGS_KEY must not contain whitespace/,
    );
    expect(spaced).not.toContain('secret');
  });

  it('reads every variable and trims a trailing slash from the URL', () => {
    const config = loadBrokerConfig({
      HERETEK_GATEWAY_URL: 'https://gw.example:8443/',
      HERETEK_GATEWAY_MODE: 'multiplexed',
      HERETEK_GATEWAY_TOKEN: 's3cret',
      HERETEK_GATEWAY_TIMEOUT_MS: '1500',
      HERETEK_GATEWAY_MAX_STREAMS: '7',
      HERETEK_BROKER_ROLE: 'staff-mobile',
      HERETEK_DISCOVERY_TTL_MS: '1000',
      HERETEK_BROKER_OFFLINE: '1',
      HERETEK_BROKER_PROFILE: 'android',
    });
    expect(config).toMatchObject({
      gatewayUrl: 'https://gw.example:8443',
      gatewayMode: 'multiplexed',
      gatewayToken: 's3cret',
      gatewayTimeoutMs: 1500,
      gatewayMaxStreams: 7,
      role: 'staff-mobile',
      discoveryTtlMs: 1000,
      offline: true,
      defaultProfile: 'android',
    });
  });

  it('reads the pins, usage and index cache settings, with the state directory under XDG_STATE_HOME', () => {
    expect(loadBrokerConfig({ XDG_STATE_HOME: '/srv/state' })).toMatchObject({
      pinsFile: '/srv/state/heretek/pins.json',
      usageFile: '/srv/state/heretek/usage.jsonl',
      indexCacheFile: '/srv/state/heretek/index-cache.bin',
    });
    expect(
      loadBrokerConfig({
        HERETEK_PINS_FILE: 'team/pins.json',
        HERETEK_PIN_POLICY: 'warn',
        HERETEK_PINS_READ_ONLY: '1',
        HERETEK_USAGE_FILE: 'off',
        HERETEK_INDEX_CACHE_FILE: 'off',
      }),
    ).toMatchObject({
      pinsFile: 'team/pins.json',
      pinPolicy: 'warn',
      pinsReadOnly: true,
      usageFile: 'off',
      indexCacheFile: 'off',
    });
  });

  it('reads HERETEK_RESULT_GUARD: unset or on guards results, off passes them untouched, anything else is named', () => {
    expect(loadBrokerConfig({}).resultGuard).toBe(true);
    expect(loadBrokerConfig({ HERETEK_RESULT_GUARD: 'on' }).resultGuard).toBe(
      true,
    );
    expect(loadBrokerConfig({ HERETEK_RESULT_GUARD: 'off' }).resultGuard).toBe(
      false,
    );
    let issues: readonly string[] = [];
    try {
      loadBrokerConfig({ HERETEK_RESULT_GUARD: 'no' });
    } catch (error) {
      issues = (error as BrokerConfigError).issues;
    }
    expect(issues).toEqual([
      'HERETEK_RESULT_GUARD must be on or off: unset it to clean and flag tool results, or set it to off to pass them untouched',
    ]);
  });

  it('names HERETEK_PIN_POLICY and HERETEK_PINS_READ_ONLY when their values are wrong', () => {
    let issues: readonly string[] = [];
    try {
      loadBrokerConfig({
        HERETEK_PIN_POLICY: 'strict',
        HERETEK_PINS_READ_ONLY: 'yes',
      });
    } catch (error) {
      issues = (error as BrokerConfigError).issues;
    }
    expect(issues).toEqual([
      'HERETEK_PIN_POLICY must be one of refuse, warn, off',
      'HERETEK_PINS_READ_ONLY must be 1 or 0 (true or false)',
    ]);
  });

  it('reports every bad variable at once, each by name, and never echoes the token', () => {
    try {
      loadBrokerConfig({
        HERETEK_GATEWAY_TIMEOUT_MS: '0',
        HERETEK_BROKER_ROLE: 'admin',
        HERETEK_GATEWAY_TOKEN: 'has space secret',
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(BrokerConfigError);
      const issues = (error as BrokerConfigError).issues;
      expect(issues).toHaveLength(3);
      expect(issues.join('\n')).toMatch(
        /HERETEK_GATEWAY_TIMEOUT_MS must be between 1/,
      );
      expect(issues.join('\n')).toMatch(/HERETEK_BROKER_ROLE must be one of/);
      expect(issues.join('\n')).toMatch(
        /HERETEK_GATEWAY_TOKEN must not contain whitespace/,
      );
      expect((error as Error).message).not.toContain('secret');
    }
  });

  it('refuses, when going online, a gateway URL with credentials (without echoing them) or with a /mcp path, naming the variable', async () => {
    await expect(
      createGateway(
        loadBrokerConfig({ HERETEK_GATEWAY_URL: 'http://user:s3cret@gw:3000' }),
      ),
    ).rejects.toThrow(/HERETEK_GATEWAY_URL: must not carry credentials/);
    const refused = await createGateway(
      loadBrokerConfig({ HERETEK_GATEWAY_URL: 'http://user:s3cret@gw:3000' }),
    ).catch((error: unknown) => error as BrokerConfigError);
    expect(BrokerConfigError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).not.toContain('s3cret');
    await expect(
      createGateway(
        loadBrokerConfig({ HERETEK_GATEWAY_URL: 'http://gw:3000/mcp' }),
      ),
    ).rejects.toThrow(/HERETEK_GATEWAY_URL: .*without the trailing \/mcp/);
    await expect(
      createGateway(loadBrokerConfig({ HERETEK_GATEWAY_URL: 'ftp://gw' })),
    ).rejects.toThrow(/HERETEK_GATEWAY_URL: must be an absolute http/);
    expect(
      loadBrokerConfig({ HERETEK_GATEWAY_URL: 'http://gw:3000/prefix/' })
        .gatewayUrl,
    ).toBe('http://gw:3000/prefix');
    const gateway = await createGateway(
      loadBrokerConfig({ HERETEK_GATEWAY_URL: 'http://127.0.0.1:9/prefix/' }),
    );
    await gateway.close();
  });

  it('treats an empty variable as unset, except an empty token, which is refused', () => {
    expect(loadBrokerConfig({ HERETEK_GATEWAY_MODE: '' }).gatewayMode).toBe(
      'per-target',
    );
    expect(() => loadBrokerConfig({ HERETEK_GATEWAY_TOKEN: '' })).toThrow(
      /HERETEK_GATEWAY_TOKEN is set but empty/,
    );
  });
});

describe('environmentHelp', () => {
  it('shows for each variable the value an unset variable gets', () => {
    const lines = environmentHelp();
    expect(lines).toHaveLength(24);
    const state = '/tmp/heretek-help-state';
    const unset = loadBrokerConfig({ XDG_STATE_HOME: state });
    for (const line of lines) {
      const [, name, shown] = /^ {2}(\S+) .* \(default: (.+)\)$/.exec(line)!;
      if (shown === 'unset') {
        // Unset and empty are the same thing (an empty token is refused above).
        if (
          name === 'HERETEK_GATEWAY_TOKEN' ||
          name === 'HERETEK_EMBEDDINGS_KEY'
        )
          continue;
        expect(
          loadBrokerConfig({ XDG_STATE_HOME: state, [name!]: '' }),
        ).toEqual(unset);
        continue;
      }
      const value = shown!.replace('$XDG_STATE_HOME', state);
      expect(
        loadBrokerConfig({ XDG_STATE_HOME: state, [name!]: value }),
      ).toEqual(unset);
    }
  });
});
