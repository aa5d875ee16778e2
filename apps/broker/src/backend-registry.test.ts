import { describe, expect, it } from 'vitest';
import { BackendRegistry } from './backend-registry.js';

const adb = { backend: 'iksnerd/adb-mcp', target: 'adb', profile: 'android' };

describe('BackendRegistry', () => {
  it('reads the configured backends by target, in order', () => {
    const registry = new BackendRegistry([
      adb,
      { backend: 'x/ghidra', target: 'ghidra', profile: 'reverse' },
    ]);
    expect(registry.get('adb')).toEqual(adb);
    expect(registry.has('ghidra')).toBe(true);
    expect(registry.has('nope')).toBe(false);
    expect([...registry.targets()]).toEqual(['adb', 'ghidra']);
  });

  it('learns a revealed target once, under profile core, and keeps a known one', () => {
    const registry = new BackendRegistry([adb]);
    expect(registry.learn('adb')).toEqual({ backend: adb, learned: false });
    expect(registry.learn('extra')).toEqual({
      backend: { backend: 'extra', target: 'extra', profile: 'core' },
      learned: true,
    });
    expect(registry.learn('extra').learned).toBe(false);
    expect([...registry.all()].map((backend) => backend.target)).toEqual([
      'adb',
      'extra',
    ]);
  });
});
