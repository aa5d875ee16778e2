// Compiles src/similarity-kernel.wat (WebAssembly text) with wabt and writes
// its bytes, base64, to src/similarity-kernel-bytes.ts. similarity-kernel.test.ts
// checks that the written bytes are this compilation's.
//
//   node scripts/build-kernel.mjs
import { Buffer } from 'node:buffer';
import { readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';
import wabt from 'wabt';

/** The kernel's bytes compiled from its text. */
export async function compileKernel() {
  const source = new URL('../src/similarity-kernel.wat', import.meta.url);
  const module = (await wabt()).parseWat(
    'similarity-kernel.wat',
    readFileSync(source, 'utf8'),
    { simd: true },
  );
  return Buffer.from(module.toBinary({}).buffer);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const bytes = await compileKernel();
  writeFileSync(
    new URL('../src/similarity-kernel-bytes.ts', import.meta.url),
    `// Written by scripts/build-kernel.mjs from similarity-kernel.wat: do not edit.\n/** The similarity kernel's WebAssembly bytes, base64. */\nexport const SIMILARITY_KERNEL =\n  '${bytes.toString('base64')}';\n`,
  );
  process.stdout.write(`similarity kernel: ${bytes.length} bytes\n`);
}
