/** Exit codes of the CLI. */
export const EXIT_CODES = { ok: 0, failure: 1, usage: 2 } as const;
