/**
 * Which shell commands a read-only role may run: a documented allow-list of
 * commands that only read, checked against a strict reading of the command
 * text. The reading accepts a small part of the POSIX shell language (words,
 * quotes, pipes, `&&`, `||`, `;`) and refuses everything whose effect it
 * cannot see from the text: redirections, expansions (`$`, backquotes),
 * subshells and groups, brace expansion, background jobs, comments.
 *
 * Hand-written rather than built on a shell parser: a parser that reads all
 * of Bash (mvdan/sh's ports, tree-sitter-bash) is megabytes of WASM or
 * generated code, asynchronous, and leaves every construct to be refused by
 * hand; a lexer such as `shell-quote` drops the quoting and expands variables,
 * so `-{exec,}` or `$IFS` would reach the option checks in a form the shell
 * never runs. Refusing every special character outside quotes keeps the
 * argument short: what is accepted is exactly the words the shell will pass.
 */

/** How a command's arguments are checked; each field refuses what can write or run something. */
type CommandRule = {
  /** Allowed first arguments (git's read-only subcommands); unset: any. */
  readonly subcommands?: readonly string[];
  /** Exact arguments refused anywhere (find's actions). */
  readonly refusedWords?: readonly string[];
  /** Long options refused, with any abbreviation of them (`--out` for `--output`) and any `=value`. */
  readonly refusedLongOptions?: readonly string[];
  /** Short option letters refused, alone or bundled (`-o`, `-ro`). */
  readonly refusedShortOptions?: string;
  /** Global options allowed before the subcommand (git's `--no-pager`). */
  readonly globalOptions?: readonly string[];
};

const FIND_ACTIONS = [
  '-delete',
  '-exec',
  '-execdir',
  '-ok',
  '-okdir',
  '-fls',
  '-fprint',
  '-fprint0',
  '-fprintf',
];

/**
 * The commands a read-only role may run under the `allow-list` shell
 * policy, and what each may not be given. In the order the role text lists
 * them. Test runners and build tools are not here: they run the project's
 * own code, which writes caches, reports and snapshots and can do anything.
 */
export const READ_ONLY_COMMANDS: Readonly<Record<string, CommandRule>> =
  Object.freeze({
    cat: {},
    head: {},
    tail: {},
    wc: {},
    ls: {},
    pwd: {},
    echo: {},
    stat: {},
    du: {},
    realpath: {},
    readlink: {},
    basename: {},
    dirname: {},
    diff: {},
    cmp: {},
    sha256sum: {},
    md5sum: {},
    which: {},
    grep: {},
    egrep: {},
    fgrep: {},
    // --pre runs a program on every file searched; --hostname-bin runs one.
    rg: { refusedLongOptions: ['pre', 'hostname-bin'] },
    find: { refusedWords: FIND_ACTIONS },
    sort: {
      refusedShortOptions: 'o',
      refusedLongOptions: ['output', 'compress-program'],
    },
    git: {
      subcommands: [
        'status',
        'diff',
        'log',
        'show',
        'blame',
        'grep',
        'ls-files',
        'rev-parse',
      ],
      globalOptions: ['--no-pager'],
      // --output writes the diff to a file; grep's -O runs a pager program.
      refusedLongOptions: ['output', 'open-files-in-pager'],
      refusedShortOptions: 'O',
    },
  });

/** One word as the shell will pass it, and whether it holds an unquoted glob character. */
type Word = { readonly text: string; readonly glob: boolean };

/** The verdict on one shell command text. */
export type ShellCheck =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      /** Why, for the model: what was refused and how to write it instead. */
      readonly reason: string;
    };

const refuse = (reason: string): ShellCheck => ({ allowed: false, reason });

/** Redirections of a finished word's output that write nothing: to /dev/null or another stream. */
const HARMLESS_REDIRECTION = /^>(?:[ \t]*\/dev\/null|&[12])(?=$|[\s;|&])/;

/** What a special character outside quotes means, for the refusal. */
const SPECIAL: Readonly<Record<string, string>> = {
  $: 'an expansion (`$`)',
  '`': 'a command substitution (backquotes)',
  '(': 'a subshell or group (`(`)',
  ')': 'a subshell or group (`)`)',
  '{': 'a group or brace expansion (`{`): quote it',
  '}': 'a group or brace expansion (`}`): quote it',
  '<': 'an input redirection or here-document (`<`)',
  '#': 'a comment (`#`): quote it',
};

type Lexed =
  | { readonly commands: readonly (readonly Word[])[] }
  | { readonly refused: string };

/** Splits `text` into simple commands of words, or says what it refuses. */
function lex(text: string): Lexed {
  const commands: Word[][] = [];
  let words: Word[] = [];
  let word: { text: string; glob: boolean; quoted: boolean } | undefined;
  /** True after `|`, `&&` or `||`: a command must follow (a newline may come first). */
  let needsCommand = false;
  const endWord = () => {
    if (word !== undefined) words.push({ text: word.text, glob: word.glob });
    word = undefined;
  };
  /** Ends the command at a separator; `open` is `|`, `&&` or `||`. */
  const endCommand = (
    separator: 'open' | 'semicolon' | 'newline',
  ): string | undefined => {
    endWord();
    if (words.length === 0) {
      if (separator === 'newline') return undefined;
      return 'a separator with no command before it';
    }
    commands.push(words);
    words = [];
    needsCommand = separator === 'open';
    return undefined;
  };
  const append = (chars: string, glob = false, quoted = false) => {
    word ??= { text: '', glob: false, quoted: false };
    word.text += chars;
    word.glob ||= glob;
    word.quoted ||= quoted;
  };
  let index = 0;
  while (index < text.length) {
    const char = text[index]!;
    const next = text[index + 1];
    let problem: string | undefined;
    if (char === ' ' || char === '\t') endWord();
    else if (char === '\n') problem = endCommand('newline');
    else if (char === ';') problem = endCommand('semicolon');
    else if (char === '|' && next === '&')
      problem = 'a pipe of both streams (`|&`)';
    else if (char === '|' || (char === '&' && next === '&')) {
      if (next === char) index += 1;
      problem = endCommand('open');
    } else if (char === '&') problem = 'a background job (`&`)';
    else if (char === '>') {
      // `2>/dev/null`: the word so far is the stream number, not an argument.
      if (word !== undefined && !word.quoted && /^[12]$/.test(word.text))
        word = undefined;
      endWord();
      const harmless = HARMLESS_REDIRECTION.exec(text.slice(index));
      if (harmless === null)
        return {
          refused:
            'an output redirection (`>`), which writes a file; only `>/dev/null`, `2>/dev/null` and `2>&1` are allowed',
        };
      index += harmless[0].length - 1;
    } else if (char === "'") {
      const end = text.indexOf("'", index + 1);
      if (end === -1) return { refused: 'an unterminated single quote' };
      append(text.slice(index + 1, end), false, true);
      index = end;
    } else if (char === '"') {
      const end = readDoubleQuoted(text, index + 1);
      if (typeof end === 'string') return { refused: end };
      append(end.text, false, true);
      index = end.end;
    } else if (char === '\\') {
      if (next === undefined) return { refused: 'a trailing backslash' };
      if (next !== '\n') append(next, false, true);
      index += 1;
    } else if (SPECIAL[char] !== undefined) problem = SPECIAL[char];
    else append(char, char === '*' || char === '?' || char === '[');
    if (problem !== undefined) return { refused: problem };
    index += 1;
  }
  endCommand('newline');
  if (needsCommand) return { refused: 'a separator with no command after it' };
  if (commands.length === 0) return { refused: 'no command' };
  return { commands };
}

/** A double-quoted string from `start` (after its opening quote): its text and closing index, or a refusal. */
function readDoubleQuoted(
  text: string,
  start: number,
): { text: string; end: number } | string {
  let value = '';
  for (let index = start; index < text.length; index += 1) {
    const char = text[index]!;
    if (char === '"') return { text: value, end: index };
    if (char === '$') return 'an expansion (`$`) inside double quotes';
    if (char === '`')
      return 'a command substitution (backquotes) inside double quotes';
    if (char === '\\') {
      const next = text[index + 1];
      if (next !== undefined && '$`"\\\n'.includes(next)) {
        if (next !== '\n') value += next;
        index += 1;
        continue;
      }
    }
    value += char;
  }
  return 'an unterminated double quote';
}

/** Why one argument of `command` is refused by its rule, if it is. */
function refusedArgument(
  command: string,
  rule: CommandRule,
  argument: Word,
): string | undefined {
  const text = argument.text;
  const hasRules =
    rule.refusedWords !== undefined ||
    rule.refusedLongOptions !== undefined ||
    rule.refusedShortOptions !== undefined;
  if (hasRules && argument.glob)
    return `\`${command}\` with an unquoted pattern (${text}): quote it, or the shell could expand it into an option`;
  if (rule.refusedWords?.includes(text))
    return `\`${command} ${text}\`, which writes, deletes or runs a program`;
  if (text.startsWith('--') && text.length > 2) {
    const name = text.slice(2).split('=')[0]!;
    const option = rule.refusedLongOptions?.find((refused) =>
      refused.startsWith(name),
    );
    if (option !== undefined && name !== '')
      return `\`${command} --${option}\`, which writes a file or runs a program`;
  } else if (/^-[^-]/.test(text)) {
    const letter = [...(rule.refusedShortOptions ?? '')].find((refused) =>
      text.slice(1).includes(refused),
    );
    if (letter !== undefined)
      return `\`${command} -${letter}\`, which writes a file or runs a program`;
  }
  return undefined;
}

/** Why one simple command is refused, if it is. */
function refusedCommand(words: readonly Word[]): string | undefined {
  const [name, ...rest] = words;
  const rule = Object.hasOwn(READ_ONLY_COMMANDS, name!.text)
    ? READ_ONLY_COMMANDS[name!.text]
    : undefined;
  if (rule === undefined || name!.glob)
    return `\`${name!.text}\`, which is not on the list of read-only commands`;
  let args = rest;
  if (rule.subcommands !== undefined) {
    while (
      args[0] !== undefined &&
      rule.globalOptions?.includes(args[0].text) === true
    )
      args = args.slice(1);
    const subcommand = args[0]?.text;
    if (subcommand === undefined || !rule.subcommands.includes(subcommand))
      return `\`${[name!.text, subcommand].join(' ').trim()}\`, and only \`${name!.text} ${rule.subcommands.join('|')}\` are read-only`;
    args = args.slice(1);
  }
  for (const argument of args) {
    const problem = refusedArgument(name!.text, rule, argument);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * Whether `command` (the text a harness's shell tool would run) only reads:
 * every simple command in it is on {@link READ_ONLY_COMMANDS} with none of
 * its refused options, joined by `|`, `&&`, `||`, `;` or newlines, and
 * nothing else (no redirection but to `/dev/null` or `2>&1`, no `$`, no
 * backquotes, no subshells, groups, brace expansion, background jobs or
 * comments).
 */
export function checkReadOnlyShellCommand(command: string): ShellCheck {
  const lexed = lex(command);
  if ('refused' in lexed) return refuse(`the command holds ${lexed.refused}`);
  for (const words of lexed.commands) {
    const problem = refusedCommand(words);
    if (problem !== undefined) return refuse(`the command runs ${problem}`);
  }
  return { allowed: true };
}

/** The allow-list as text, for the role text: the commands, then one refused option of each that has some. */
export function describeReadOnlyCommands(): string {
  const names = Object.entries(READ_ONLY_COMMANDS).map(([name, rule]) =>
    rule.subcommands === undefined
      ? name
      : `${name} ${rule.subcommands.join('|')}`,
  );
  const examples = Object.entries(READ_ONLY_COMMANDS).flatMap(
    ([name, rule]) => {
      const first =
        rule.refusedWords?.[0] ??
        (rule.refusedLongOptions?.[0] === undefined
          ? undefined
          : `--${rule.refusedLongOptions[0]}`);
      return first === undefined ? [] : [`${name} ${first}`];
    },
  );
  return `${names.join(', ')}; their options that write a file or run a program (${examples.join(', ')} and the like) are refused`;
}
