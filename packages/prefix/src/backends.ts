/**
 * The default backends and the profile each belongs to, as data. Layer 4 of
 * the prompt renders the backends in scope for the active profile from this
 * table. `@heretek/catalog` keeps its own copy for search; the two packages
 * do not depend on each other.
 */
import type { ProfileName } from './profiles.js';

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
export const BACKENDS: readonly BackendDefinition[] = Object.freeze(
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

/** What each profile is for, one line each, rendered into layer 4. Frozen data. */
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

/**
 * The backends in scope for `profile`: the profile's own plus `core`, in
 * table order.
 */
export function backendsForProfile(
  profile: ProfileName,
): readonly BackendDefinition[] {
  return BACKENDS.filter(
    (entry) => entry.profile === 'core' || entry.profile === profile,
  );
}
