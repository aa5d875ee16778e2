import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKENDS } from './backends.js';
import { SEED_TOOLS, toolEntryFromMcpTool } from './entries.js';
import { CatalogError } from './errors.js';

const adb = { backend: 'iksnerd/adb-mcp', target: 'adb', profile: 'android' };

describe('toolEntryFromMcpTool', () => {
  it("keeps the listing's execution.taskSupport, and only its known values", () => {
    const entry = (execution?: { taskSupport?: string }) =>
      toolEntryFromMcpTool({
        backend: adb,
        tool: { name: 'research', ...(execution ? { execution } : {}) },
      });
    expect(entry({ taskSupport: 'required' }).taskSupport).toBe('required');
    expect(entry({ taskSupport: 'optional' }).taskSupport).toBe('optional');
    expect(entry({ taskSupport: 'forbidden' }).taskSupport).toBe('forbidden');
    expect(entry({ taskSupport: 'sometimes' })).not.toHaveProperty(
      'taskSupport',
    );
    expect(entry()).not.toHaveProperty('taskSupport');
  });

  it('qualifies the name and keeps the bare tool name', () => {
    const entry = toolEntryFromMcpTool({
      backend: adb,
      tool: { name: 'install_apk', description: 'Install an APK' },
    });
    expect(entry).toMatchObject({
      name: 'adb_install_apk',
      tool: 'install_apk',
      target: 'adb',
      backend: 'iksnerd/adb-mcp',
      profile: 'android',
      source: 'discovered',
    });
  });

  it('marks a tool mutating unless readOnlyHint is true', () => {
    expect(
      toolEntryFromMcpTool({ backend: adb, tool: { name: 'a' } }).mutating,
    ).toBe(true);
    expect(
      toolEntryFromMcpTool({
        backend: adb,
        tool: { name: 'a', annotations: { readOnlyHint: false } },
      }).mutating,
    ).toBe(true);
    expect(
      toolEntryFromMcpTool({
        backend: adb,
        tool: { name: 'a', annotations: { readOnlyHint: true } },
      }).mutating,
    ).toBe(false);
  });

  it('keeps the known annotations, one shared frozen object per set of flags without a title', () => {
    const annotationsOf = (annotations: Record<string, unknown>) =>
      toolEntryFromMcpTool({ backend: adb, tool: { name: 'a', annotations } })
        .annotations;
    const readOnly = annotationsOf({ readOnlyHint: true, extra: 1 });
    expect(readOnly).toEqual({ readOnlyHint: true });
    expect(annotationsOf({ readOnlyHint: true })).toBe(readOnly);
    expect(Object.isFrozen(readOnly)).toBe(true);
    const both = annotationsOf({ destructiveHint: false, readOnlyHint: false });
    expect(JSON.stringify(both)).toBe(
      '{"readOnlyHint":false,"destructiveHint":false}',
    );
    expect(both).not.toBe(readOnly);
    const titled = annotationsOf({ title: 'Tap', readOnlyHint: true });
    expect(titled).toEqual({ title: 'Tap', readOnlyHint: true });
    expect(titled).not.toBe(
      annotationsOf({ title: 'Tap', readOnlyHint: true }),
    );
    expect(annotationsOf({ other: true })).toBeUndefined();
  });

  it('replaces a schema that is not an object and a missing description', () => {
    const entry = toolEntryFromMcpTool({
      backend: adb,
      tool: { name: 'a', inputSchema: 'nope' },
    });
    expect(entry.inputSchema).toEqual({ type: 'object' });
    expect(entry.description).toBe('');
    expect(
      toolEntryFromMcpTool({
        backend: adb,
        tool: { name: 'a', inputSchema: [1] },
      }).inputSchema,
    ).toEqual({ type: 'object' });
  });

  it('rejects a nameless tool and a target with an underscore', () => {
    expect(() =>
      toolEntryFromMcpTool({ backend: adb, tool: { name: '' } }),
    ).toThrow(/no name/);
    const error = (() => {
      try {
        toolEntryFromMcpTool({
          backend: { ...adb, target: 'my_adb' },
          tool: { name: 'a' },
        });
      } catch (caught) {
        return caught;
      }
    })();
    expect(CatalogError.isInstance(error)).toBe(true);
    expect((error as CatalogError).code).toBe('INVALID_TARGET');
  });
});

describe('SEED_TOOLS', () => {
  const record = new URL('../data/seed-tools.json', import.meta.url);
  type RecordedTool = {
    target: string;
    name: string;
    readOnly: boolean;
    inputSchema: { required?: string[]; properties?: Record<string, unknown> };
  };

  it('has 34 tools over the 12 default backends', () => {
    expect(SEED_TOOLS).toHaveLength(34);
    expect(new Set(SEED_TOOLS.map((tool) => tool.backend))).toEqual(
      new Set(DEFAULT_BACKENDS.map((backend) => backend.backend)),
    );
    for (const tool of SEED_TOOLS) {
      const backend = DEFAULT_BACKENDS.find(
        (candidate) => candidate.backend === tool.backend,
      );
      expect(tool.target).toBe(backend?.target);
      expect(tool.profile).toBe(backend?.profile);
      expect(tool.name).toBe(`${tool.target}_${tool.tool}`);
      expect(tool.source).toBe('seed');
      expect(tool.description.length).toBeGreaterThan(20);
    }
  });

  it('matches the recorded names, parameters, types, required lists and read-only flags', () => {
    const tools = (
      JSON.parse(readFileSync(record, 'utf8')) as { tools: RecordedTool[] }
    ).tools;
    expect(SEED_TOOLS.map((tool) => tool.name)).toEqual(
      tools.map((tool) => `${tool.target}_${tool.name}`),
    );
    tools.forEach((tool, position) => {
      const entry = SEED_TOOLS[position]!;
      expect(entry.mutating).toBe(!tool.readOnly);
      expect(
        Object.keys((entry.inputSchema.properties as object | undefined) ?? {}),
      ).toEqual(Object.keys(tool.inputSchema.properties ?? {}));
      expect(entry.inputSchema.required).toEqual(tool.inputSchema.required);
      const typesOf = (properties: unknown): unknown[] =>
        Object.values(
          (properties as Record<string, { type?: unknown }>) ?? {},
        ).map((property) => property.type);
      expect(typesOf(entry.inputSchema.properties)).toEqual(
        typesOf(tool.inputSchema.properties),
      );
    });
  });
});
