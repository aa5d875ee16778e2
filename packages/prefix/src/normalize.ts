/**
 * Source normalisation: the same prompt text gives the same bytes whatever
 * the checkout did to it (Windows line endings, a byte order mark, trailing
 * spaces an editor left, a different Unicode normal form).
 */

/**
 * Normalise one prompt source: drop a leading byte order mark, turn CRLF and
 * lone CR into LF, apply Unicode NFC, strip trailing spaces and tabs from
 * every line, and drop blank lines at the start and end. The result has no
 * trailing newline; the assembler adds the layer separators itself.
 */
export function normalizeSourceText(text: string): string {
  const withoutBom = text.startsWith('\uFEFF') ? text.slice(1) : text;
  return withoutBom
    .replace(/\r\n?/g, '\n')
    .normalize('NFC')
    .split('\n')
    .map((line) => line.replace(/[ \t]+$/, ''))
    .join('\n')
    .replace(/^\n+/, '')
    .replace(/\n+$/, '');
}
