// The offline seed catalog (34 tools over the 12 default backends), written by hand.
// Tool names, parameter names, types, required lists and read-only flags are facts of each
// backend, recorded with their sources (repository, file, commit) in data/seed-tools.json;
// src/entries.test.ts checks this file against that record. Descriptions are written here
// for search.
import type { SeedToolSpec } from './types.js';

/** The raw seed specifications: one per built-in tool, in backend order. */
export const SEED_TOOL_SPECS: readonly SeedToolSpec[] = [
  {
    backend: 'heretek-core',
    target: 'core',
    profile: 'core',
    tool: 'read_file',
    description:
      'Read the contents of a text file in the workspace, optionally only a window of bytes from an offset. Read-only.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        path: {
          type: 'string',
          description: 'Workspace-relative path of the file to read.',
        },
        offset: {
          type: 'integer',
          description: 'Byte offset to start reading from (default 0).',
          minimum: 0,
          default: 0,
        },
        max_bytes: {
          type: 'integer',
          description: 'Maximum number of bytes to return (default 65536).',
          minimum: 1,
          default: 65536,
        },
      },
      required: ['path'],
      additionalProperties: false,
    },
  },
  {
    backend: 'heretek-core',
    target: 'core',
    profile: 'core',
    tool: 'list_directory',
    description:
      'List files and subdirectories of a workspace folder with their type and size, optionally recursive. Read-only.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        path: {
          type: 'string',
          description: "Workspace-relative directory to list (default '.').",
          default: '.',
        },
        recursive: {
          type: 'boolean',
          description: 'Descend into subdirectories (default false).',
          default: false,
        },
        max_entries: {
          type: 'integer',
          description: 'Maximum number of entries to return (default 500).',
          minimum: 1,
          default: 500,
        },
      },
      additionalProperties: false,
    },
  },
  {
    backend: 'heretek-core',
    target: 'core',
    profile: 'core',
    tool: 'git_status',
    description:
      'Show git repository status: current branch, staged, modified and untracked files (like git status). Read-only; never stages or commits.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        path: {
          type: 'string',
          description:
            'Workspace-relative path of the repository (default: workspace root).',
          default: '.',
        },
        include_untracked: {
          type: 'boolean',
          description: 'Include untracked files (default true).',
          default: true,
        },
      },
      additionalProperties: false,
    },
  },
  {
    backend: 'ghidra-mcp',
    target: 'ghidra',
    profile: 'appsec',
    tool: 'search_functions_by_name',
    description:
      'Search functions in the binary loaded in Ghidra by part of their name; paged results.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          description: 'Substring to look for in function names.',
        },
        offset: {
          type: 'integer',
          description: 'Pagination offset (default 0).',
          default: 0,
        },
        limit: {
          type: 'integer',
          description: 'Maximum number of results (default 100).',
          default: 100,
        },
      },
      required: ['query'],
    },
  },
  {
    backend: 'ghidra-mcp',
    target: 'ghidra',
    profile: 'appsec',
    tool: 'decompile_function',
    description:
      'Decompile a function of the program loaded in Ghidra, found by name, into C pseudocode.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        name: {
          type: 'string',
          description: 'Name of the function to decompile.',
        },
      },
      required: ['name'],
    },
  },
  {
    backend: 'ghidra-mcp',
    target: 'ghidra',
    profile: 'appsec',
    tool: 'rename_function',
    description:
      'Rename a function in the Ghidra project database from its old name to a new name. Changes the database.',
    readOnly: false,
    inputSchema: {
      type: 'object',
      properties: {
        old_name: {
          type: 'string',
          description: 'Current function name.',
        },
        new_name: {
          type: 'string',
          description: 'New function name.',
        },
      },
      required: ['old_name', 'new_name'],
    },
  },
  {
    backend: 'radare2-mcp',
    target: 'radare2',
    profile: 'appsec',
    tool: 'open_file',
    description:
      'Open a binary executable in radare2 (r2) for reverse engineering; call first with an absolute file path, optionally setting base address, architecture and bits.',
    readOnly: false,
    inputSchema: {
      type: 'object',
      properties: {
        file_path: {
          type: 'string',
          description: 'Path of the file to open (absolute).',
        },
        baddr: {
          type: 'string',
          description:
            'Optional base address, as radare2 -B/-m (e.g. 0x400000); also maps raw files there.',
        },
        arch: {
          type: 'string',
          description:
            "Optional asm.arch override (e.g. 'arm'), needed for raw binaries.",
        },
        bits: {
          type: 'string',
          description: 'Optional asm.bits override (e.g. 16 for ARM Thumb).',
        },
        cpu: {
          type: 'string',
          description: "Optional asm.cpu override (e.g. 'cortex').",
        },
      },
      required: ['file_path'],
    },
  },
  {
    backend: 'radare2-mcp',
    target: 'radare2',
    profile: 'appsec',
    tool: 'list_functions',
    description:
      'List functions discovered by radare2 analysis of the open binary, with regex name filter, named-only or count-only modes and paging.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        only_named: {
          type: 'boolean',
          description: 'Only list functions that have real symbol names.',
        },
        filter: {
          type: 'string',
          description: 'Regular expression to filter the results.',
        },
        count: {
          type: 'boolean',
          description: 'Return only the number of matches.',
        },
        start: {
          type: 'integer',
          description: 'Starting index for pagination (default 0).',
        },
        max_length: {
          type: 'integer',
          description: 'Maximum results to return, -1 for all (default 50).',
        },
      },
    },
  },
  {
    backend: 'radare2-mcp',
    target: 'radare2',
    profile: 'appsec',
    tool: 'decompile_function',
    description:
      'Decompile the function at an address in radare2 into C-like pseudocode, with paging of long output.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        address: {
          type: 'string',
          description: 'Address of the function to decompile.',
        },
        cursor: {
          type: 'string',
          description: 'Pagination cursor (line number to start from).',
        },
        page_size: {
          type: 'integer',
          description: 'Lines per page (default 1000, max 10000).',
        },
      },
      required: ['address'],
    },
  },
  {
    backend: 'morluto/rea',
    target: 'rea',
    profile: 'appsec',
    tool: 'open_binary',
    description:
      'Open an executable, app bundle, archive, JavaScript bundle, plist or analysis database in REA for reverse engineering and bind it to an analysis provider (Ghidra, Hopper).',
    readOnly: false,
    inputSchema: {
      type: 'object',
      properties: {
        path: {
          type: 'string',
          description: 'Local filesystem path of the target.',
          minLength: 1,
        },
        provider_id: {
          type: 'string',
          description:
            "Exact deep-analysis provider id (pattern ^[a-z][a-z0-9-]*$) or 'auto'; automatic selection when omitted.",
          maxLength: 64,
        },
        snapshot_path: {
          type: 'string',
          description:
            'Optional REA analysis snapshot (v2) to import atomically; must match the binary and provider.',
          minLength: 1,
        },
      },
      required: ['path'],
    },
  },
  {
    backend: 'morluto/rea',
    target: 'rea',
    profile: 'appsec',
    tool: 'binary_overview',
    description:
      'Overview of the binary opened in REA: counts of procedures, strings and documents plus a sample of segments. Use right after open_binary.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        detail: {
          type: 'string',
          description: 'Response detail level (default concise).',
          enum: ['concise', 'detailed'],
          default: 'concise',
        },
        limit: {
          type: 'integer',
          description: 'Size of the returned segment sample (default 10).',
          minimum: 1,
          maximum: 50,
          default: 10,
        },
      },
      additionalProperties: false,
    },
  },
  {
    backend: 'morluto/rea',
    target: 'rea',
    profile: 'appsec',
    tool: 'analyze_function',
    description:
      'Analyze one procedure of the opened binary by symbol name or address: decompiled pseudocode, optional disassembly, callers, callees, cross-references, strings and control-flow blocks.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        procedure: {
          type: 'string',
          description: 'Procedure name or address.',
        },
        include_assembly: {
          type: 'boolean',
          description: 'Include assembly in the result (default false).',
          default: false,
        },
        limit: {
          type: 'integer',
          description: 'Maximum items per collection page (default 100).',
          minimum: 1,
          maximum: 500,
          default: 100,
        },
        max_instructions: {
          type: 'integer',
          description: 'Instruction budget (default 500).',
          minimum: 1,
          maximum: 5000,
          default: 500,
        },
        max_pseudocode_chars: {
          type: 'integer',
          description: 'Pseudocode character budget (default 20000).',
          minimum: 1,
          maximum: 100000,
          default: 20000,
        },
        pseudocode_offset: {
          type: 'integer',
          description: 'Character offset into the pseudocode (default 0).',
          minimum: 0,
          default: 0,
        },
        assembly_offset: {
          type: 'integer',
          description:
            'Index of the first assembly line to return (default 0).',
          minimum: 0,
          default: 0,
        },
        collection_offset: {
          type: 'object',
          description:
            'Per-collection start offsets: basic_blocks, callees, callers, comments, incoming_references, outgoing_references, referenced_names, referenced_strings (all default 0).',
        },
      },
      required: ['procedure'],
      additionalProperties: false,
    },
  },
  {
    backend: 'mdb-mcp',
    target: 'mdb',
    profile: 'appsec',
    tool: 'debugger_status',
    description:
      'Report which native debuggers (GDB, LLDB) are available on this machine and list open debugging sessions.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {},
    },
  },
  {
    backend: 'mdb-mcp',
    target: 'mdb',
    profile: 'appsec',
    tool: 'debugger_start',
    description:
      'Start a new GDB or LLDB debugging session, optionally loading a program with arguments; returns the session id.',
    readOnly: false,
    inputSchema: {
      type: 'object',
      properties: {
        debugger: {
          type: 'string',
          description:
            "Debugger to use; 'auto' prefers LLDB on macOS and GDB elsewhere.",
          enum: ['auto', 'gdb', 'lldb'],
          default: 'auto',
        },
        program: {
          type: 'string',
          description: 'Absolute path of an executable to load (optional).',
        },
        args: {
          type: 'string',
          description: 'Command-line arguments for the program, as one string.',
        },
      },
    },
  },
  {
    backend: 'mdb-mcp',
    target: 'mdb',
    profile: 'appsec',
    tool: 'debugger_command',
    description:
      'Send one GDB or LLDB command (breakpoint, run, backtrace, memory examine) to a debugging session and return its output.',
    readOnly: false,
    inputSchema: {
      type: 'object',
      properties: {
        session_id: {
          type: 'string',
          description: 'Session ID returned by debugger_start.',
        },
        command: {
          type: 'string',
          description: "Native command for the session's debugger.",
        },
        timeout: {
          type: 'number',
          description:
            'Seconds to wait for the target to stop when the command resumes it (default 10).',
          minimum: 1,
          maximum: 600,
          default: 10,
        },
      },
      required: ['session_id', 'command'],
    },
  },
  {
    backend: 'iksnerd/adb-mcp',
    target: 'adb',
    profile: 'android',
    tool: 'list_devices',
    description:
      'List Android devices and emulators attached over adb with their state (device, offline, unauthorized) and serial number.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        serial: {
          type: 'string',
          description:
            'Accepted (shared device-argument struct) but ignored by this tool.',
        },
      },
    },
  },
  {
    backend: 'iksnerd/adb-mcp',
    target: 'adb',
    profile: 'android',
    tool: 'describe_ui',
    description:
      'Dump the Android screen UI hierarchy over adb: elements with text, content description, resource id, bounds and tap coordinates.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        serial: {
          type: 'string',
          description:
            'Target device serial (adb -s); optional when exactly one device is attached.',
        },
        filter: {
          type: 'string',
          description:
            "'auto' (default), 'clickable' (tap targets only) or 'all' (every bounded node).",
        },
        query: {
          type: 'string',
          description:
            'Case-insensitive substring matched against text, content_desc and resource_id.',
        },
        compact: {
          type: 'boolean',
          description:
            'One line per element instead of JSON (about 10x fewer tokens).',
        },
        package: {
          type: 'string',
          description:
            'Package expected to own the focused window; a mismatch is reported.',
        },
      },
    },
  },
  {
    backend: 'iksnerd/adb-mcp',
    target: 'adb',
    profile: 'android',
    tool: 'tap',
    description:
      'Tap the Android screen at x, y device pixel coordinates over adb; can report the element hit and whether the UI changed.',
    readOnly: false,
    inputSchema: {
      type: 'object',
      properties: {
        serial: {
          type: 'string',
          description:
            'Target device serial (adb -s); optional when exactly one device is attached.',
        },
        x: {
          type: 'integer',
          description: 'X coordinate in true device pixels.',
        },
        y: {
          type: 'integer',
          description: 'Y coordinate in true device pixels.',
        },
        verify_change: {
          type: 'boolean',
          description:
            'Also report whether the UI hierarchy changed after the tap.',
        },
        identify: {
          type: 'boolean',
          description: 'Also report which UI element the coordinate lands in.',
        },
      },
      required: ['x', 'y'],
    },
  },
  {
    backend: 'maestro',
    target: 'maestro',
    profile: 'android',
    tool: 'list_devices',
    description:
      'List devices Maestro can drive: connected or launchable Android emulators, iOS simulators and Chromium web, with their device_id.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {},
    },
  },
  {
    backend: 'maestro',
    target: 'maestro',
    profile: 'android',
    tool: 'inspect_screen',
    description:
      'Get the current mobile screen view hierarchy as compact JSON, to write Maestro selectors for UI tests.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        device_id: {
          type: 'string',
          description: 'ID of the device to read the hierarchy from.',
        },
      },
      required: ['device_id'],
    },
  },
  {
    backend: 'maestro',
    target: 'maestro',
    profile: 'android',
    tool: 'run',
    description:
      'Run Maestro UI test flows on a mobile device: inline flow YAML, flow files, or a directory of flows filtered by tags, with environment variables.',
    readOnly: false,
    inputSchema: {
      type: 'object',
      properties: {
        device_id: {
          type: 'string',
          description: 'ID of the device to run on (see list_devices).',
        },
        yaml: {
          type: 'string',
          description:
            'Inline Maestro flow YAML; exclusive with files and dir.',
        },
        files: {
          type: 'array',
          description: 'Flow YAML files to run; exclusive with yaml and dir.',
          items: {
            type: 'string',
          },
        },
        dir: {
          type: 'string',
          description:
            'Directory of flow files; exclusive with yaml and files.',
        },
        include_tags: {
          type: 'array',
          description:
            'Only run flows with at least one of these tags (dir only).',
          items: {
            type: 'string',
          },
        },
        exclude_tags: {
          type: 'array',
          description: 'Skip flows with any of these tags (dir only).',
          items: {
            type: 'string',
          },
        },
        env: {
          type: 'object',
          description: 'Environment variables injected into the flow(s).',
          additionalProperties: {
            type: 'string',
          },
        },
      },
      required: ['device_id'],
    },
  },
  {
    backend: 'godot-mcp',
    target: 'godot',
    profile: 'game',
    tool: 'get_project_info',
    description:
      'Get information about a Godot game engine project: project name, Godot version and file structure summary.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        projectPath: {
          type: 'string',
          description: 'Path to the Godot project directory.',
        },
      },
      required: ['projectPath'],
    },
  },
  {
    backend: 'godot-mcp',
    target: 'godot',
    profile: 'game',
    tool: 'run_project',
    description:
      'Launch a Godot game project, or one scene of it, in debug mode and capture its console output.',
    readOnly: false,
    inputSchema: {
      type: 'object',
      properties: {
        projectPath: {
          type: 'string',
          description: 'Path to the Godot project directory.',
        },
        scene: {
          type: 'string',
          description: 'Optional scene to run instead of the main scene.',
        },
      },
      required: ['projectPath'],
    },
  },
  {
    backend: 'godot-mcp',
    target: 'godot',
    profile: 'game',
    tool: 'get_debug_output',
    description:
      'Get the console output and errors captured from the running Godot project started with run_project.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {},
    },
  },
  {
    backend: 'blender-mcp',
    target: 'blender',
    profile: 'game',
    tool: 'get_scene_info',
    description:
      'Get a JSON summary of the open Blender 3D scene and its objects.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        user_prompt: {
          type: 'string',
          description:
            'The user request that led to this call (required upstream; used for telemetry).',
        },
      },
      required: ['user_prompt'],
    },
  },
  {
    backend: 'blender-mcp',
    target: 'blender',
    profile: 'game',
    tool: 'execute_blender_code',
    description:
      'Execute Python code inside the running Blender 3D instance (bpy) and return the result; can modify the scene.',
    readOnly: false,
    inputSchema: {
      type: 'object',
      properties: {
        code: {
          type: 'string',
          description: 'Python code to execute in Blender.',
        },
        user_prompt: {
          type: 'string',
          description: 'The user request that led to this call (telemetry).',
          default: '',
        },
      },
      required: ['code'],
    },
  },
  {
    backend: 'crawl4ai',
    target: 'crawl4ai',
    profile: 'research',
    tool: 'md',
    description:
      'Fetch a web page URL and convert it to clean Markdown, with fit, raw, bm25 or llm content filters and an optional query.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        url: {
          type: 'string',
          description: 'Absolute http/https URL (or raw: HTML) to fetch.',
        },
        f: {
          type: 'string',
          description: 'Content-filter strategy (default fit).',
          enum: ['raw', 'fit', 'bm25', 'llm'],
          default: 'fit',
        },
        q: {
          type: 'string',
          description: 'Query used by the bm25/llm filters.',
        },
        c: {
          type: 'string',
          description: "Cache-bust / revision counter (default '0').",
          default: '0',
        },
        provider: {
          type: 'string',
          description:
            "LLM provider override for the llm filter (e.g. 'anthropic/claude-3-opus').",
        },
        temperature: {
          type: 'number',
          description: 'LLM temperature override (0.0-2.0).',
        },
      },
      required: ['url'],
    },
  },
  {
    backend: 'crawl4ai',
    target: 'crawl4ai',
    profile: 'research',
    tool: 'crawl',
    description:
      'Crawl one or more web page URLs (up to 100) with browser and crawler settings; returns markdown, links, media and metadata as JSON.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        urls: {
          type: 'array',
          description: 'URLs to crawl.',
          items: {
            type: 'string',
          },
          minItems: 1,
          maxItems: 100,
        },
        browser_config: {
          type: 'object',
          description: 'BrowserConfig parameters as a dict.',
        },
        crawler_config: {
          type: 'object',
          description: 'CrawlerRunConfig parameters as a dict.',
        },
        crawler_configs: {
          type: 'array',
          description:
            'Per-URL CrawlerRunConfig dicts (may carry a url_matcher); overrides crawler_config.',
          items: {
            type: 'object',
          },
        },
        hooks: {
          type: 'object',
          description:
            'Declarative hook specs {hooks:[{action, params}], timeout}; rejected unless the server enables hooks.',
        },
      },
      required: ['urls'],
    },
  },
  {
    backend: 'searxng',
    target: 'searxng',
    profile: 'research',
    tool: 'searxng_web_search',
    description:
      'Web search through a SearXNG metasearch instance: results with title, URL and snippet; filters for time range, language, safe search, engines and categories, with paging.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          description: "The search query (parameter name is exactly 'query').",
        },
        pageno: {
          type: 'integer',
          description: 'Result page number, starting at 1.',
          minimum: 1,
          default: 1,
        },
        time_range: {
          type: 'string',
          description: 'Restrict results to a time range.',
          enum: ['day', 'week', 'month', 'year'],
        },
        language: {
          type: 'string',
          description: "Language code such as 'en' or 'all' (default 'all').",
          default: 'all',
        },
        safesearch: {
          type: 'string',
          description: 'Safe search level: 0 none, 1 moderate, 2 strict.',
          enum: ['0', '1', '2'],
        },
        min_score: {
          type: 'number',
          description: 'Drop results below this relevance score.',
          minimum: 0,
          maximum: 1,
        },
        num_results: {
          type: 'number',
          description: 'Maximum number of results (1-20).',
          minimum: 1,
          maximum: 20,
        },
        categories: {
          type: 'string',
          description: 'Comma-separated SearXNG categories.',
        },
        engines: {
          type: 'string',
          description:
            "Comma-separated SearXNG engine names, e.g. 'google,bing,ddg'.",
        },
        response_format: {
          type: 'string',
          description: 'Formatted text for agents or raw JSON.',
          enum: ['text', 'json'],
        },
        result_detail: {
          type: 'string',
          description:
            "'full' keeps SearXNG metadata; 'compact' returns title, url and content only.",
          enum: ['compact', 'full'],
        },
      },
      required: ['query'],
    },
  },
  {
    backend: 'searxng',
    target: 'searxng',
    profile: 'research',
    tool: 'web_url_read',
    description:
      'Read a web page URL and return its content as Markdown (HTML, JSON, text or PDF), with character paging, section extraction or headings only.',
    readOnly: true,
    inputSchema: {
      type: 'object',
      properties: {
        url: {
          type: 'string',
          description: 'URL to fetch.',
        },
        startChar: {
          type: 'number',
          description: 'Start character position (default 0).',
          minimum: 0,
        },
        maxLength: {
          type: 'number',
          description: 'Maximum number of characters to return.',
          minimum: 1,
        },
        section: {
          type: 'string',
          description:
            'Return only the content under the heading with this text.',
        },
        paragraphRange: {
          type: 'string',
          description: "Paragraph range to return, e.g. '1-5', '3', '10-'.",
        },
        readHeadings: {
          type: 'boolean',
          description: 'Return only the list of headings.',
        },
      },
      required: ['url'],
    },
  },
  {
    backend: 'computer-use-linux',
    target: 'gui',
    profile: 'research',
    tool: 'screenshot',
    description:
      'Take a screenshot of the Linux desktop or of one application window as PNG or JPEG, with coordinates mapping back to the screen.',
    readOnly: false,
    inputSchema: {
      type: 'object',
      properties: {
        window_id: {
          type: 'integer',
          description: 'Compositor window id to target.',
          minimum: 0,
        },
        pid: {
          type: 'integer',
          description: 'Process id of the target window.',
          minimum: 0,
        },
        app_id: {
          type: 'string',
          description: 'Application id of the target window.',
        },
        wm_class: {
          type: 'string',
          description: 'Window-manager class of the target window.',
        },
        title: {
          type: 'string',
          description: 'Window title substring to target.',
        },
        full_screen: {
          type: 'boolean',
          description:
            'Capture the whole desktop even when a window is targeted (default false).',
        },
        raise_window: {
          type: 'boolean',
          description:
            'Raise the targeted window before capture (default true).',
        },
        format: {
          type: 'string',
          description: 'Output image format (default png).',
          enum: ['png', 'jpeg'],
        },
        quality: {
          type: 'integer',
          description: 'JPEG quality 1-95 (default 80); ignored for png.',
          minimum: 1,
          maximum: 95,
        },
        scale: {
          type: 'number',
          description:
            'Extra downscale factor 0.0-1.0 applied before the size caps.',
        },
        max_width: {
          type: 'integer',
          description:
            'Maximum returned width in pixels (default 1920, hard-capped).',
          minimum: 0,
        },
        max_height: {
          type: 'integer',
          description:
            'Maximum returned height in pixels (default 1920, hard-capped).',
          minimum: 0,
        },
        max_bytes: {
          type: 'integer',
          description:
            'Maximum image bytes before base64 (default 2 MiB, hard-capped).',
          minimum: 0,
        },
      },
    },
  },
  {
    backend: 'computer-use-linux',
    target: 'gui',
    profile: 'research',
    tool: 'click',
    description:
      'Mouse click on a Linux desktop GUI element by accessibility index, role, name or text, or at screen coordinates; left, right, double click.',
    readOnly: false,
    inputSchema: {
      type: 'object',
      properties: {
        element_index: {
          type: 'integer',
          description: 'Index of an element from get_app_state.',
          minimum: 0,
        },
        role: {
          type: 'string',
          description:
            'AT-SPI role of the element to click (semantic selector).',
        },
        name: {
          type: 'string',
          description: 'Accessible name of the element (semantic selector).',
        },
        text: {
          type: 'string',
          description: 'Text of the element (semantic selector).',
        },
        states: {
          type: 'array',
          description: 'AT-SPI states the element must have.',
          items: {
            type: 'string',
          },
        },
        x: {
          type: 'integer',
          description: 'Desktop X coordinate in coordinate pixels.',
        },
        y: {
          type: 'integer',
          description: 'Desktop Y coordinate in coordinate pixels.',
        },
        relative: {
          type: 'boolean',
          description:
            "Interpret x/y from the targeted window's screenshot crop origin; needs a window target.",
        },
        button: {
          type: 'string',
          description: 'Mouse button, e.g. left, right, middle.',
        },
        click_count: {
          type: 'integer',
          description: 'Number of clicks (e.g. 2 for double-click).',
          minimum: 0,
        },
        window_id: {
          type: 'integer',
          description: 'Compositor window id to target.',
          minimum: 0,
        },
        pid: {
          type: 'integer',
          description: 'Process id of the target window.',
          minimum: 0,
        },
        app_id: {
          type: 'string',
          description: 'Application id of the target window.',
        },
        wm_class: {
          type: 'string',
          description: 'Window-manager class of the target window.',
        },
        window_title: {
          type: 'string',
          description: 'Window title substring to target.',
        },
      },
    },
  },
  {
    backend: 'computer-use-linux',
    target: 'gui',
    profile: 'research',
    tool: 'type_text',
    description:
      'Type text with the keyboard into the focused Linux desktop window or a terminal, optionally focusing a target window first.',
    readOnly: false,
    inputSchema: {
      type: 'object',
      properties: {
        text: {
          type: 'string',
          description: 'Literal text to type.',
        },
        window_id: {
          type: 'integer',
          description: 'Compositor window id to target.',
          minimum: 0,
        },
        pid: {
          type: 'integer',
          description: 'Process id of the target window.',
          minimum: 0,
        },
        app_id: {
          type: 'string',
          description: 'Application id of the target window.',
        },
        wm_class: {
          type: 'string',
          description: 'Window-manager class of the target window.',
        },
        title: {
          type: 'string',
          description: 'Window title substring to target.',
        },
        terminal_pid: {
          type: 'integer',
          description: 'Terminal emulator pid to target.',
          minimum: 0,
        },
        terminal_command: {
          type: 'string',
          description:
            'Substring of the command running in the target terminal.',
        },
        terminal_cwd: {
          type: 'string',
          description: 'Working directory of the target terminal.',
        },
        tty: {
          type: 'string',
          description: 'Terminal tty device, e.g. /dev/pts/3.',
        },
      },
      required: ['text'],
    },
  },
  {
    backend: 'computer-use-linux',
    target: 'gui',
    profile: 'research',
    tool: 'press_key',
    description:
      'Press a keyboard key or key combination such as ctrl+c or Enter in a Linux desktop window or terminal.',
    readOnly: false,
    inputSchema: {
      type: 'object',
      properties: {
        key: {
          type: 'string',
          description:
            'Key or chord, e.g. Enter, Escape, Ctrl+L, Ctrl+Shift+T, F5.',
        },
        window_id: {
          type: 'integer',
          description: 'Compositor window id to target.',
          minimum: 0,
        },
        pid: {
          type: 'integer',
          description: 'Process id of the target window.',
          minimum: 0,
        },
        app_id: {
          type: 'string',
          description: 'Application id of the target window.',
        },
        wm_class: {
          type: 'string',
          description: 'Window-manager class of the target window.',
        },
        title: {
          type: 'string',
          description: 'Window title substring to target.',
        },
        terminal_pid: {
          type: 'integer',
          description: 'Terminal emulator pid to target.',
          minimum: 0,
        },
        terminal_command: {
          type: 'string',
          description:
            'Substring of the command running in the target terminal.',
        },
        terminal_cwd: {
          type: 'string',
          description: 'Working directory of the target terminal.',
        },
        tty: {
          type: 'string',
          description: 'Terminal tty device, e.g. /dev/pts/3.',
        },
      },
      required: ['key'],
    },
  },
];
