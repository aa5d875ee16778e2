/** Writes dist/THIRD-PARTY-NOTICES.md from esbuild's metafile; see the .mjs file. */
export function writeThirdPartyNotices(options: {
  metafile: string;
  out: string;
}): Promise<void>;
