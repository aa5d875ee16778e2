declare const __PACKAGE_VERSION__: string;

/** The published version of this package, inlined at build time. */
export const VERSION: string =
  typeof __PACKAGE_VERSION__ === 'string' ? __PACKAGE_VERSION__ : '0.0.0-dev';
