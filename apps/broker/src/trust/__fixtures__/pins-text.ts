// Test fixture: the pins of a pins file's text, parsed line by line as the
// format says (a test reads what the store wrote without the store's reader).
import type { PinsFile } from '../pins-file.js';

/** The pins of a pins file's text: its header line, then one JSON object per pin. */
export function parsePins(text: string): PinsFile {
  const [header, ...lines] = text.split('\n').slice(0, -1);
  const tools: PinsFile['tools'] = {};
  for (const line of lines) {
    const { hash, name, tool } = JSON.parse(line) as {
      hash: string;
      name: string;
      tool: Omit<PinsFile['tools'][string], 'hash'>;
    };
    tools[name] = { hash, ...tool };
  }
  return { ...(JSON.parse(header!) as Omit<PinsFile, 'tools'>), tools };
}
