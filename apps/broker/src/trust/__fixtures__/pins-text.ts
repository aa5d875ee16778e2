// Test fixture: the pins of a pins file's text, parsed line by line as the
// format says (a test reads what the store wrote without the store's reader),
// and the text of a pins file (a test writes one without a store).
import {
  headerLine,
  pinLine,
  type PINS_FILE_VERSION,
  type PinBody,
} from '../pins-file.js';

/** The pins file's content: its mark and its pins by qualified name. */
export type PinsFile = {
  version: typeof PINS_FILE_VERSION;
  readOnly?: boolean;
  tools: Record<string, PinBody & { hash: string }>;
};

/** The whole pins file's text (what a store writes for these pins). */
export function serializePinsFile(file: PinsFile): string {
  const names = Object.keys(file.tools).sort();
  return (
    headerLine(file.readOnly === true) +
    names
      .map((name) => pinLine(name, file.tools[name]!.hash, file.tools[name]!))
      .join('')
  );
}

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
