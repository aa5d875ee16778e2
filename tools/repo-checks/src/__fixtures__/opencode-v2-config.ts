// OpenCode 2's configuration file (`opencode.json`), transcribed into zod from
// OpenCode's Effect Schema source, github.com/anomalyco/opencode:
//   packages/schema/src/config.ts         07fbe9b7bc2dac334d3335a4b9456f71c0111235 (Config.Info: the top-level keys)
//   packages/schema/src/config/plugin.ts  b9a1ca3f7d5fa3f53f68bffac41ae812a98431c8 (plugins)
//   packages/schema/src/config/mcp.ts     b9a1ca3f7d5fa3f53f68bffac41ae812a98431c8 (mcp: timeout, servers)
//   packages/schema/src/mcp.ts            9805c6fc6583a39b7e5b45821a1e30a6426bee71 (Mcp.LocalConfig, Mcp.RemoteConfig, Mcp.TimeoutConfig)
// OpenCode is MIT-licensed (OPENCODE-LICENSE beside this file). OpenCode 2
// publishes no config package on the npm registry, hence the transcription.
// `plugins` and `mcp` are transcribed field by field; every other top-level
// key is listed by name with its value left unchecked. Objects are strict
// here, so a misspelt key in a snippet fails.
import { z } from 'zod';

const positiveInt = z.number().int().positive();

// Mcp.TimeoutConfig
const timeout = z.strictObject({
  startup: positiveInt.optional(),
  catalog: positiveInt.optional(),
  execution: positiveInt.optional(),
});

// Mcp.LocalConfig
const local = z.strictObject({
  type: z.literal('local'),
  command: z.array(z.string()),
  cwd: z.string().optional(),
  environment: z.record(z.string(), z.string()).optional(),
  disabled: z.boolean().optional(),
  /** "Expose this server's tools through Code Mode. Defaults to true." */
  codemode: z.boolean().optional(),
  timeout: timeout.optional(),
});

// Mcp.OAuthConfig
const oauth = z.strictObject({
  client_id: z.string().optional(),
  client_secret: z.string().optional(),
  scope: z.string().optional(),
  callback_port: z.number().int().min(1).max(65535).optional(),
  redirect_uri: z.string().optional(),
});

// Mcp.RemoteConfig
const remote = z.strictObject({
  type: z.literal('remote'),
  url: z.string(),
  headers: z.record(z.string(), z.string()).optional(),
  oauth: z.union([oauth, z.literal(false)]).optional(),
  disabled: z.boolean().optional(),
  codemode: z.boolean().optional(),
  timeout: timeout.optional(),
});

// ConfigPlugin.Plugins: a package name, or { package, options }.
const plugin = z.union([
  z.string(),
  z.strictObject({
    package: z.string(),
    options: z.record(z.string(), z.unknown()).optional(),
  }),
]);

const unchecked = z.unknown().optional();

/** Config.Info of OpenCode 2. */
export const openCode2Config = z.strictObject({
  $schema: z.string().optional(),
  shell: unchecked,
  model: unchecked,
  default_agent: unchecked,
  update: unchecked,
  share: unchecked,
  enterprise: unchecked,
  username: unchecked,
  permissions: unchecked,
  agents: unchecked,
  snapshots: unchecked,
  watcher: unchecked,
  formatter: unchecked,
  lsp: unchecked,
  media: unchecked,
  tool_output: unchecked,
  mcp: z
    .strictObject({
      timeout: timeout.optional(),
      servers: z
        .record(z.string(), z.discriminatedUnion('type', [local, remote]))
        .optional(),
    })
    .optional(),
  compaction: unchecked,
  skills: unchecked,
  commands: unchecked,
  instructions: unchecked,
  references: unchecked,
  websearch: unchecked,
  plugins: z.array(plugin).optional(),
  warming: unchecked,
  providers: unchecked,
  experimental: unchecked,
});
