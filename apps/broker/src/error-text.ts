/**
 * An error as one line of text: its message, with its stable code (a family
 * error's `code`, or a Node errno code such as `ENOENT`) when it has one that
 * the message does not already name. The one way the broker turns a caught
 * value into words for a log line or a refusal.
 */
export function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code)
    ? `${error.message} (${code})`
    : error.message;
}
