import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKENDS, loadBackends } from './backends.js';
import { codeOf } from './__fixtures__/error-code.js';
import { scratchFolder } from './__fixtures__/scratch-folder.js';

const directory = scratchFolder('heretek-catalog-');

function write(name: string, content: string): string {
  const file = join(directory, name);
  writeFileSync(file, content);
  return file;
}

describe('DEFAULT_BACKENDS', () => {
  it('lists the 12 backends with unique targets free of "_"', () => {
    expect(DEFAULT_BACKENDS).toHaveLength(12);
    expect(
      new Set(DEFAULT_BACKENDS.map((backend) => backend.target)).size,
    ).toBe(12);
    expect(
      DEFAULT_BACKENDS.every((backend) => !backend.target.includes('_')),
    ).toBe(true);
    expect(
      DEFAULT_BACKENDS.find(
        (backend) => backend.backend === 'computer-use-linux',
      ),
    ).toEqual({
      backend: 'computer-use-linux',
      target: 'gui',
      profile: 'research',
    });
  });
});

describe('loadBackends', () => {
  it('reads a valid file', () => {
    const file = write(
      'ok.json',
      JSON.stringify([
        { backend: 'my-server', target: 'mine', profile: 'custom' },
      ]),
    );
    expect(loadBackends({ file })).toEqual([
      { backend: 'my-server', target: 'mine', profile: 'custom' },
    ]);
  });

  it('explains what is wrong', () => {
    expect(
      codeOf(() => loadBackends({ file: join(directory, 'missing.json') })),
    ).toBe('INVALID_BACKENDS_FILE');
    expect(
      codeOf(() => loadBackends({ file: write('bad.json', '{not json') })),
    ).toBe('INVALID_BACKENDS_FILE');
    expect(codeOf(() => loadBackends({ file: write('obj.json', '{}') }))).toBe(
      'INVALID_BACKENDS_FILE',
    );
    expect(() =>
      loadBackends({
        file: write(
          'field.json',
          JSON.stringify([{ backend: 'x', target: 't' }]),
        ),
      }),
    ).toThrow(/\[0\]: "profile" must be a non-empty string/);
    expect(() =>
      loadBackends({
        file: write(
          'under.json',
          JSON.stringify([{ backend: 'x', target: 'my_t', profile: 'p' }]),
        ),
      }),
    ).toThrow(/'_' is reserved/);
    expect(() =>
      loadBackends({
        file: write(
          'upper.json',
          JSON.stringify([{ backend: 'x', target: 'Ghidra', profile: 'p' }]),
        ),
      }),
    ).toThrow(/"Ghidra": .*lowercase letters/);
    expect(
      codeOf(() =>
        loadBackends({
          file: write(
            'under2.json',
            JSON.stringify([{ backend: 'x', target: 'my_t', profile: 'p' }]),
          ),
        }),
      ),
    ).toBe('INVALID_TARGET');
    expect(() =>
      loadBackends({
        file: write(
          'dup.json',
          JSON.stringify([
            { backend: 'x', target: 't', profile: 'p' },
            { backend: 'y', target: 't', profile: 'p' },
          ]),
        ),
      }),
    ).toThrow(/target "t" is already used/);
    expect(() =>
      loadBackends({
        file: write(
          'extra.json',
          JSON.stringify([{ backend: 'x', target: 't', profile: 'p', url: 1 }]),
        ),
      }),
    ).toThrow(/unknown field/);
  });
});
