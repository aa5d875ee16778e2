import { describe, expect, it } from 'vitest';
import { checkReadOnlyShellCommand } from './index.js';

const reasonOf = (command: string) => {
  const check = checkReadOnlyShellCommand(command);
  return check.allowed ? undefined : check.reason;
};

describe('checkReadOnlyShellCommand', () => {
  it.each([
    'ls -la',
    'cat README.md',
    'git status',
    'git --no-pager log --oneline -5',
    'git diff HEAD~1 -- src/a.ts',
    'git show HEAD:package.json',
    'git log --output-indicator-new=+ -p',
    'grep -rn "TODO: fix" src',
    "rg -n 'foo|bar' --pretty --pre-glob '*.gz'",
    "find . -name '*.ts' -not -path './node_modules/*'",
    'ls src/*.ts',
    'grep -r foo . 2>/dev/null',
    'git log 2>&1 | head -20',
    'ls >/dev/null',
    'wc -l a.txt && cat a.txt || echo none; pwd',
    'ls |\n  grep x',
    'cat "a\\"b" \'c d\' e\\ f',
    'ls;',
    'git log\n\ngit status\n',
    'sort -r names.txt',
    'echo ~',
  ])('allows %j', (command) => {
    expect(checkReadOnlyShellCommand(command)).toEqual({ allowed: true });
  });

  it.each([
    // Commands that are not on the list, wherever they stand.
    ['rm -rf build', '`rm`, which is not on the list'],
    ['ls && touch x', '`touch`, which is not on the list'],
    ['cat a | sh', '`sh`, which is not on the list'],
    ['npm test', '`npm`, which is not on the list'],
    ['FOO=1 ls', '`FOO=1`, which is not on the list'],
    ['! ls', '`!`, which is not on the list'],
    ['/bin/rm x', '`/bin/rm`, which is not on the list'],
    ['l? x', '`l?`, which is not on the list'],
    ['xargs rm < list', 'input redirection'],
    // Redirections that write.
    ['echo hi > out.txt', 'output redirection (`>`), which writes a file'],
    ['echo hi >> out.txt', 'output redirection'],
    ['echo hi >/dev/nullx', 'output redirection'],
    ['echo hi >&out', 'output redirection'],
    ['echo hi 2>err.log', 'output redirection'],
    ['cat a<>b', 'input redirection'],
    ['cat <<EOF', 'input redirection'],
    // Expansions, substitutions, groups.
    ['echo $(rm x)', 'an expansion (`$`)'],
    ['echo `rm x`', 'command substitution (backquotes)'],
    ['echo "$(rm x)"', 'an expansion (`$`) inside double quotes'],
    ['echo "`rm x`"', 'command substitution (backquotes) inside double quotes'],
    ['cat $HOME/x', 'an expansion (`$`)'],
    ["echo $'\\x41'", 'an expansion (`$`)'],
    ['(rm x)', 'a subshell or group'],
    ['{ rm x; }', 'brace expansion'],
    ['find . -{exec,} rm', 'brace expansion'],
    ['cat <(rm x)', 'input redirection'],
    ['ls & rm x', 'a background job'],
    ['ls |& cat', 'a pipe of both streams'],
    ['ls # ; rm x', 'a comment'],
    // Broken or empty text.
    ["cat 'a", 'an unterminated single quote'],
    ['cat "a', 'an unterminated double quote'],
    ['cat a\\', 'a trailing backslash'],
    ['ls |', 'a separator with no command after it'],
    ['ls &&', 'a separator with no command after it'],
    ['; ls', 'a separator with no command before it'],
    ['ls;; pwd', 'a separator with no command before it'],
    ['   ', 'no command'],
    // Listed commands given what writes or runs something.
    ['find . -delete', '`find -delete`'],
    ['find . -name x -exec rm {} ;', 'brace expansion'],
    ["find . -name x -exec rm '{}' ';'", '`find -exec`'],
    ['find . -fprint out', '`find -fprint`'],
    ["find . -name '*.ts' *", 'unquoted pattern'],
    ['rg --pre ./script foo', '`rg --pre`'],
    ['rg --pre=./script foo', '`rg --pre`'],
    ['rg --hostname-bin=./x foo', '`rg --hostname-bin`'],
    ['sort -o out.txt in.txt', '`sort -o`'],
    ['sort -ro out.txt in.txt', '`sort -o`'],
    ['sort --out=x in.txt', '`sort --output`'],
    ['git diff --output=x', '`git --output`'],
    ['git log -p --outp x', '`git --output`'],
    ['git grep -O foo', '`git -O`'],
    ['git grep --open-files-in-pager=vim foo', '`git --open-files-in-pager`'],
    ['git push', '`git push`, and only `git status|diff|'],
    ['git -c core.pager=rm log', '`git -c`, and only'],
    ['git -C /tmp status', '`git -C`, and only'],
    ['git', '`git`, and only'],
  ])('refuses %j: %s', (command, reason) => {
    expect(reasonOf(command)).toContain(reason);
  });
});
