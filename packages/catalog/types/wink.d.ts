declare module 'wink-bm25-text-search' {
  type PrepTask = (input: unknown) => unknown;
  type Engine = {
    defineConfig(config: {
      fldWeights: Record<string, number>;
      bm25Params?: { k1?: number; b?: number; k?: number };
      ovFldNames?: string[];
    }): boolean;
    definePrepTasks(tasks: PrepTask[], field?: string): number;
    addDoc(doc: Record<string, unknown>, id: string | number): number;
    consolidate(fp?: number): boolean;
    search(
      text: string,
      limit?: number,
      filter?: (
        fieldValues: Record<string, unknown>,
        params: unknown,
      ) => boolean,
      params?: unknown,
    ): Array<[string, number]>;
    getTokens(): Record<string, number>;
    getDocs(): Record<string, { freq: Record<string, number>; length: number }>;
    getIDF(): number[];
    getTotalDocs(): number;
  };
  const bm25: () => Engine;
  export default bm25;
}

declare module 'wink-porter2-stemmer' {
  const stem: (word: string) => string;
  export default stem;
}

declare module 'wink-nlp-utils' {
  const utils: { string: { stem(word: string): string } };
  export default utils;
}
