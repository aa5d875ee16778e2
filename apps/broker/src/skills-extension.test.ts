import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lockSkills } from '@heretek/skills';
import { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Broker } from './broker.js';
import { createBrokerServer, registerMetaTools } from './server.js';
import { registerVerifiedSkills } from './skills-extension.js';

const repositoryRoot = fileURLToPath(new URL('../../..', import.meta.url));
const workspaces: string[] = [];
const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  for (const workspace of workspaces.splice(0)) {
    rmSync(workspace, { recursive: true, force: true });
  }
});

function writeSkill({
  root,
  name,
  description,
}: {
  root: string;
  name: string;
  description: string;
}): void {
  mkdirSync(join(root, 'skills', name, 'references'), { recursive: true });
  writeFileSync(
    join(root, 'skills', name, 'SKILL.md'),
    `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nBody of ${name}.\n`,
  );
  writeFileSync(
    join(root, 'skills', name, 'references', 'notes.md'),
    `Notes for ${name}.\n`,
  );
}

function makeWorkspace(): string {
  const root = mkdtempSync(join(tmpdir(), 'broker-skills-'));
  workspaces.push(root);
  writeSkill({ root, name: 'alpha', description: 'Alpha skill, verified.' });
  writeSkill({
    root,
    name: 'beta',
    description: 'Beta skill, tampered after locking.',
  });
  lockSkills({ workspaceRoot: root });
  return root;
}

/** A server shaped like the broker: three meta-tools. */
/**
 * Registers the verified skills of `workspaceRoot` on a new server; `lines`
 * is what they logged.
 */
async function register(workspaceRoot: string) {
  const server = makeServer();
  const lines: string[] = [];
  const result = await registerVerifiedSkills({
    server,
    workspaceRoot,
    log: (line) => lines.push(line),
  });
  return { server, result, lines };
}

function makeServer(): McpServer {
  const server = new McpServer(
    { name: 'test-broker', version: '0.0.0' },
    { capabilities: { tools: {} } },
  );
  for (const name of [
    'mcp_search_tools',
    'mcp_inspect_schema',
    'mcp_call_tool',
  ]) {
    server.registerTool(
      name,
      {
        description: `${name} stub`,
        inputSchema: z.object({ query: z.string() }),
      },
      async () => ({ content: [{ type: 'text', text: name }] }),
    );
  }
  return server;
}

async function connect(server: McpServer): Promise<Client> {
  const [clientTransport, serverTransport] =
    InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: 'test-client', version: '0.0.0' });
  await client.connect(clientTransport);
  clients.push(client);
  return client;
}

describe('registerVerifiedSkills', () => {
  it('serves a verified skill, refuses a tampered and an unlocked one, and says why on the log', async () => {
    const root = makeWorkspace();
    // One byte of beta changes after locking.
    const betaNotes = join(root, 'skills', 'beta', 'references', 'notes.md');
    const original = readFileSync(betaNotes);
    original[0] = original[0]! ^ 0x01;
    writeFileSync(betaNotes, original);
    // A skill folder nobody locked.
    writeSkill({ root, name: 'gamma', description: 'Never locked.' });

    const { server, result, lines } = await register(root);
    expect(result.served.map((skill) => skill.name)).toEqual(['alpha']);
    expect(result.refused.map(({ name, code }) => ({ name, code }))).toEqual([
      { name: 'beta', code: 'SKILL_HASH_MISMATCH' },
      { name: 'gamma', code: 'SKILL_NOT_LOCKED' },
    ]);
    expect(
      lines.some((line) =>
        line.includes('refusing "beta" (SKILL_HASH_MISMATCH)'),
      ),
    ).toBe(true);
    expect(
      lines.some((line) =>
        line.includes('refusing "gamma" (SKILL_NOT_LOCKED)'),
      ),
    ).toBe(true);

    const client = await connect(server);
    const skills = new SkillsClient(client);
    expect(skills.supported).toBe(true);
    const listing = await skills.list();
    expect(listing.skills.map((skill) => skill.frontmatter.name)).toEqual([
      'alpha',
    ]);

    const alpha = listing.skills[0]!;
    const manifest = await skills.read(alpha);
    expect(manifest.verified).toBe(true);
    expect(Buffer.from(manifest.bytes)).toEqual(
      readFileSync(join(root, 'skills', 'alpha', 'SKILL.md')),
    );
    const notes = await skills.read(alpha, 'references/notes.md');
    expect(Buffer.from(notes.bytes).toString('utf8')).toBe(
      'Notes for alpha.\n',
    );

    // The tampered skill is reachable by no method.
    const betaUri = alpha.uri.replace('/alpha/', '/beta/');
    await expect(skills.get(betaUri)).rejects.toThrow();
    await expect(client.readResource({ uri: betaUri })).rejects.toThrow();
  });

  it('serves the bytes that were verified, even if the file changes on disk afterwards', async () => {
    const root = makeWorkspace();
    const server = makeServer();
    const alphaSkillMd = join(root, 'skills', 'alpha', 'SKILL.md');
    const verifiedBytes = readFileSync(alphaSkillMd);
    await registerVerifiedSkills({
      server,
      workspaceRoot: root,
      log: () => {},
    });
    writeFileSync(
      alphaSkillMd,
      verifiedBytes
        .toString('utf8')
        .replace('Body of alpha.', 'Injected text.'),
    );

    const client = await connect(server);
    const skills = new SkillsClient(client);
    const alpha = (await skills.list()).skills.find(
      (skill) => skill.frontmatter.name === 'alpha',
    )!;
    const manifest = await skills.read(alpha);
    expect(Buffer.from(manifest.bytes)).toEqual(verifiedBytes);
    expect(manifest.text).not.toContain('Injected text.');
  });

  it('adds nothing to tools/list', async () => {
    const root = makeWorkspace();
    const plain = makeServer();
    const withSkills = makeServer();
    const { served } = await registerVerifiedSkills({
      server: withSkills,
      workspaceRoot: root,
      log: () => {},
    });
    expect(served.length).toBeGreaterThan(0);
    const before = await (await connect(plain)).listTools();
    const after = await (await connect(withSkills)).listTools();
    expect(after.tools).toEqual(before.tools);
    expect(after.tools.map((tool) => tool.name)).toEqual([
      'mcp_search_tools',
      'mcp_inspect_schema',
      'mcp_call_tool',
    ]);
  });

  it('serves nothing and does not attach the extension when grimoire.lock was tampered with', async () => {
    const root = makeWorkspace();
    const grimoirePath = join(root, 'grimoire.lock');
    const grimoire = JSON.parse(readFileSync(grimoirePath, 'utf8')) as {
      declaration: Record<string, unknown>;
    };
    grimoire.declaration['note'] = 'added by hand';
    writeFileSync(grimoirePath, JSON.stringify(grimoire, null, 2));

    const { server, result, lines } = await register(root);
    expect(result.served).toEqual([]);
    expect(new Set(result.refused.map((skill) => skill.code))).toEqual(
      new Set(['GRIMOIRE_HASH_MISMATCH']),
    );
    expect(
      lines.filter((line) => line.includes('GRIMOIRE_HASH_MISMATCH')),
    ).toHaveLength(2);

    const skills = new SkillsClient(await connect(server));
    expect(skills.supported).toBe(false);
  });

  it('refuses every skill when .skill-lock.json is missing, and a skill holding a symlink', async () => {
    const root = makeWorkspace();
    symlinkSync(
      join(root, 'skills', 'alpha', 'SKILL.md'),
      join(root, 'skills', 'beta', 'link.md'),
    );
    const { result: withLink } = await register(root);
    expect(withLink.served.map((skill) => skill.name)).toEqual(['alpha']);
    expect(withLink.refused).toMatchObject([
      { name: 'beta', code: 'SKILL_SYMLINK' },
    ]);

    rmSync(join(root, '.skill-lock.json'));
    const { server, result, lines } = await register(root);
    expect(result.served).toEqual([]);
    expect(result.refused.map(({ name, code }) => [name, code])).toEqual([
      ['alpha', 'SKILL_LOCK_MISSING'],
      ['beta', 'SKILL_LOCK_MISSING'],
    ]);
    expect(lines).toHaveLength(2);
    expect(new SkillsClient(await connect(server)).supported).toBe(false);
  });

  it('serves the shipped lazy-search and red-proof skills from the repository', async () => {
    const { server, result } = await register(repositoryRoot);
    expect(result.refused).toEqual([]);
    expect(result.served.map((skill) => skill.name)).toEqual([
      'lazy-search',
      'red-proof',
    ]);
    const skills = new SkillsClient(await connect(server));
    const listing = await skills.list();
    const redProof = listing.skills.find(
      (skill) => skill.frontmatter.name === 'red-proof',
    )!;
    const manifest = await skills.read(redProof);
    expect(manifest.body).toContain('Never modify the system under test');
  });

  it('says so on the log when there is nothing to serve', async () => {
    const root = mkdtempSync(join(tmpdir(), 'broker-skills-empty-'));
    workspaces.push(root);
    const { result, lines } = await register(root);
    expect(result).toEqual({ served: [], refused: [] });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('skills: nothing to serve');
    expect(lines[0]).toContain('HERETEK_SKILLS_ROOT');
  });

  it("the served lazy-search skill and the protocol layer describe the real broker's answers", async () => {
    // The real broker (offline seed catalog, read-only role) with the shipped skills on the same server.
    const server = createBrokerServer();
    registerMetaTools(server, { broker: new Broker({ role: 'director' }) });
    const { served } = await registerVerifiedSkills({
      server,
      workspaceRoot: repositoryRoot,
      log: () => {},
    });
    expect(served.map((skill) => skill.name)).toContain('lazy-search');
    const client = await connect(server);
    const text = async (name: string, args: Record<string, unknown>) => {
      const result = (await client.callTool({ name, arguments: args })) as {
        content: { text: string }[];
        isError?: boolean;
      };
      return {
        text: result.content.map((part) => part.text).join('\n'),
        isError: result.isError === true,
      };
    };

    // A made-up word next to real ones: hits for the real words, the made-up one reported unmatched.
    const search = await text('mcp_search_tools', {
      query: 'tap screen zzqxv',
      limit: 3,
    });
    const lines = search.text.split('\n');
    expect(lines.at(-1)).toBe('Matched nothing: zzqxv');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines.slice(0, -1))
      expect(line).toMatch(/^[a-z0-9]+_\S+ \[(read-only|mutating)\] - \S/);
    expect((await text('mcp_search_tools', { query: 'zzqx' })).text).toMatch(
      /^No tools match "zzqx"/,
    );
    const schema = JSON.parse(
      (await text('mcp_inspect_schema', { name: 'adb_tap' })).text,
    ) as Record<string, unknown>;
    expect(Object.keys(schema)).toEqual([
      'name',
      'target',
      'description',
      'mutating',
      'inputSchema',
    ]);

    // Codes the broker really answers with, offline: each result starts with its code.
    const observed = [
      await text('mcp_call_tool', {
        name: 'adb_tap',
        arguments: { x: 1, y: 2 },
      }), // ROLE_FORBIDDEN
      await text('mcp_call_tool', {
        name: 'core_read_file',
        arguments: { path: 7 },
      }), // INVALID_ARGUMENTS
      await text('mcp_call_tool', {
        name: 'core_read_file',
        arguments: { path: 'README.md' },
      }), // NO_GATEWAY
      await text('mcp_call_tool', { name: 'nosuch_tool', arguments: {} }), // UNKNOWN_TOOL
    ].map((result) => {
      expect(result.isError).toBe(true);
      return /^([A-Z_]+): /.exec(result.text)?.[1];
    });
    expect(observed).toEqual([
      'ROLE_FORBIDDEN',
      'INVALID_ARGUMENTS',
      'NO_GATEWAY',
      'UNKNOWN_TOOL',
    ]);
    const allCodes = [
      ...observed,
      'CIRCUIT_OPEN',
      'BACKEND_FAILED',
      'CANCELLED',
    ];

    const skills = new SkillsClient(client);
    const lazySearch = (await skills.list()).skills.find(
      (skill) => skill.frontmatter.name === 'lazy-search',
    )!;
    const skillText = (await skills.read(lazySearch)).text;
    const protocol = readFileSync(
      join(repositoryRoot, 'roles', 'shared', '02-protocol.md'),
      'utf8',
    );
    for (const [what, content] of [
      ['lazy-search SKILL.md', skillText],
      ['roles/shared/02-protocol.md', protocol],
    ] as const) {
      for (const word of [
        '[read-only]',
        '[mutating]',
        'Matched nothing: ',
        'No tools match',
        ...Object.keys(schema),
        ...allCodes,
      ]) {
        expect(content, `${what} mentions ${word}`).toContain(word);
      }
    }
  });
});
