/** The five profiles. The active profile narrows tool search to its backends plus `core`. */
export const PROFILE_NAMES = [
  'core',
  'appsec',
  'android',
  'game',
  'research',
] as const;

/** A profile name. */
export type ProfileName = (typeof PROFILE_NAMES)[number];

/** True when `value` names one of the five profiles. */
export function isProfileName(value: unknown): value is ProfileName {
  return (
    typeof value === 'string' &&
    (PROFILE_NAMES as readonly string[]).includes(value)
  );
}

/** One MCP backend behind the gateway. */
export type BackendDefinition = {
  /** The backend project's name. */
  readonly backend: string;
  /** The gateway target name; qualified tool names are `<target>_<tool>`. */
  readonly target: string;
  /** The profile that brings this backend into scope. */
  readonly profile: ProfileName;
};

/** The 12 default backends, in a stable order. Frozen data. */
export const DEFAULT_BACKENDS: readonly BackendDefinition[] = Object.freeze(
  (
    [
      ['heretek-core', 'core', 'core'],
      ['ghidra-mcp', 'ghidra', 'appsec'],
      ['radare2-mcp', 'radare2', 'appsec'],
      ['morluto/rea', 'rea', 'appsec'],
      ['mdb-mcp', 'mdb', 'appsec'],
      ['iksnerd/adb-mcp', 'adb', 'android'],
      ['maestro', 'maestro', 'android'],
      ['godot-mcp', 'godot', 'game'],
      ['blender-mcp', 'blender', 'game'],
      ['crawl4ai', 'crawl4ai', 'research'],
      ['searxng', 'searxng', 'research'],
      ['computer-use-linux', 'gui', 'research'],
    ] as const
  ).map(([backend, target, profile]) =>
    Object.freeze({ backend, target, profile }),
  ),
);

/** What each profile is for, one line each. Frozen data. */
export const PROFILE_PURPOSES: Readonly<Record<ProfileName, string>> =
  Object.freeze({
    core: 'workspace files and version control only.',
    appsec:
      'reverse engineering and native debugging: decompilers, disassemblers, GDB and LLDB.',
    android:
      'Android devices and emulators: device control, UI hierarchy, scripted UI flows.',
    game: 'game and 3D work: the Godot engine and Blender.',
    research:
      'the web and the desktop: crawling pages, web search, driving a Linux desktop.',
  });
