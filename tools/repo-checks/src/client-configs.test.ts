// The client snippets in configs/ must be accepted by the clients' current
// releases. OpenCode 1 publishes its config type (@opencode-ai/sdk): the V1
// snippet is compiled against it with the TypeScript compiler, so a shape
// OpenCode 1 no longer reads fails here. OpenCode 2 publishes no config
// package on the npm registry: the V2 snippet is checked against its schema
// transcribed from OpenCode's source at named commits (__fixtures__/). Claude Code,
// Cursor and VS Code publish no config package small enough to install for a
// test (Claude Code's type ships inside @anthropic-ai/claude-agent-sdk, about
// 420 MB installed); their documented shapes are written down below as zod
// schemas, with the source of each.
import {
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openCode2Config } from './__fixtures__/opencode-v2-config.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CONFIGS = join(ROOT, 'configs');
const HERE = dirname(fileURLToPath(import.meta.url));

function readJson(name: string): unknown {
  return JSON.parse(readFileSync(join(CONFIGS, name), 'utf8'));
}

/** Environment variables the broker reads, from the README's table. */
function brokerVariables(): Set<string> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return new Set(
    [...readme.matchAll(/^\| `(HERETEK_[A-Z_]+)`\s*\|/gm)].map((m) => m[1]!),
  );
}

const scratch = mkdtempSync(join(HERE, '.typecheck-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Compiles `const config: <type> = <json>` and returns the diagnostics. */
function typeErrors(
  json: unknown,
  importLine: string,
  typeName: string,
): string[] {
  const file = join(scratch, `check-${typeName.replace(/\W/g, '')}.ts`);
  writeFileSync(
    file,
    `${importLine}\nexport const config: ${typeName} = ${JSON.stringify(json, null, 2)};\n`,
  );
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

const env = z.record(z.string().regex(/^HERETEK_[A-Z_]+$/), z.string());

/** A stdio server entry; `type` is optional unless the client requires it. */
const stdioServer = (type: z.ZodType) =>
  z.strictObject({
    type,
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    env: env.optional(),
  });

// Claude Code `.mcp.json`: McpStdioServerConfig in @anthropic-ai/claude-agent-sdk
// 0.3.328 sdk.d.ts ({ type?: 'stdio'; command; args?; env? }), docs.claude.com "MCP".
const claudeCode = z.strictObject({
  mcpServers: z.record(z.string(), stdioServer(z.literal('stdio').optional())),
});

// Cursor `.cursor/mcp.json`: docs.cursor.com "Model Context Protocol",
// stdio servers are { command, args?, env? } under mcpServers.
const cursor = claudeCode;

// VS Code `.vscode/mcp.json`: code.visualstudio.com "MCP configuration
// reference", stdio servers are { type: 'stdio', command, args?, env? } under servers.
const vscode = z.strictObject({
  servers: z.record(z.string(), stdioServer(z.literal('stdio'))),
  inputs: z.array(z.unknown()).optional(),
});

describe('client config snippets', () => {
  it('covers every file in configs/', () => {
    const checked = [
      'agentgateway.example.yaml',
      'claude-code.mcp.json',
      'cursor.mcp.json',
      'opencode.v1.json',
      'opencode.v2.json',
      'vscode.mcp.json',
    ];
    expect(readdirSync(CONFIGS).sort()).toEqual(checked);
  });

  it('OpenCode 1 accepts opencode.v1.json (its published Config type)', () => {
    const json = readJson('opencode.v1.json') as Record<string, unknown>;
    const { $schema: _schema, ...config } = json;
    expect(
      typeErrors(
        config,
        "import type { Config } from '@opencode-ai/sdk';",
        'Config',
      ),
    ).toEqual([]);
    // OpenCode 1 does not read `plugins` (1.18.33 ignores it, other 1.x reject the file).
    expect(Object.keys(json)).not.toContain('plugins');
  });

  it("OpenCode 1's type rejects V2's mcp.servers shape", () => {
    expect(
      typeErrors(
        readJson('opencode.v2.json'),
        "import type { Config } from '@opencode-ai/sdk';",
        'Config',
      ).length,
    ).toBeGreaterThan(0);
  });

  it('OpenCode 2 accepts opencode.v2.json (its schema), with the broker kept out of Code Mode', () => {
    const json = readJson('opencode.v2.json') as {
      mcp: { servers: Record<string, { codemode?: boolean }> };
    };
    const result = openCode2Config.safeParse(json);
    expect(result.error?.issues ?? []).toEqual([]);
    expect(json.mcp.servers['heretek-lazy-broker']?.codemode).toBe(false);
  });

  it("OpenCode 2's schema rejects V1's shape (plugin, mcp.<name>, enabled)", () => {
    const result = openCode2Config.safeParse(readJson('opencode.v1.json'));
    expect(result.success).toBe(false);
    expect(
      openCode2Config.safeParse({
        mcp: {
          servers: {
            broker: { type: 'local', command: ['x'], enabled: true },
          },
        },
      }).success,
    ).toBe(false);
  });

  it.each([
    ['claude-code.mcp.json', claudeCode],
    ['cursor.mcp.json', cursor],
    ['vscode.mcp.json', vscode],
  ] as const)('%s has the documented shape', (name, schema) => {
    const result = schema.safeParse(readJson(name));
    expect(result.error?.issues ?? []).toEqual([]);
  });

  it('every snippet starts @heretek/broker with variables the broker reads', () => {
    const known = brokerVariables();
    expect(known.size).toBeGreaterThan(5);
    for (const name of readdirSync(CONFIGS).filter((f) =>
      f.endsWith('.json'),
    )) {
      const text = readFileSync(join(CONFIGS, name), 'utf8');
      expect(text, name).toContain('@heretek/broker');
      for (const [variable] of text.matchAll(/HERETEK_[A-Z_]+/g)) {
        expect(known, `${name}: ${variable}`).toContain(variable);
      }
    }
  });
});
