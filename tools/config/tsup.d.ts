import type { Options } from 'tsup';

/** The tsup preset of every published @heretek package. */
export function libraryConfig(options: { entry: string[] } & Options): Options;
