import type { Backend } from '@heretek/catalog';

/** The backends the broker knows, as every part but discovery sees them. */
export type BackendView = {
  /** The backend served under `target`, if known. */
  get(target: string): Backend | undefined;
  /** Whether `target` is known. */
  has(target: string): boolean;
  /** Known targets, configured ones first, in order. */
  targets(): IterableIterator<string>;
  /** Known backends, configured ones first, in order. */
  all(): IterableIterator<Backend>;
  /** The table as a read-only map keyed by target. */
  readonly byTarget: ReadonlyMap<string, Backend>;
};

/** The backend table: the configured backends plus any target a multiplexed listing revealed (discovery writes it). */
export class BackendRegistry implements BackendView {
  readonly #backends: Map<string, Backend>;

  constructor(backends: readonly Backend[]) {
    this.#backends = new Map(
      backends.map((backend) => [backend.target, backend]),
    );
  }

  get(target: string): Backend | undefined {
    return this.#backends.get(target);
  }

  has(target: string): boolean {
    return this.#backends.has(target);
  }

  targets(): IterableIterator<string> {
    return this.#backends.keys();
  }

  all(): IterableIterator<Backend> {
    return this.#backends.values();
  }

  get byTarget(): ReadonlyMap<string, Backend> {
    return this.#backends;
  }

  /** The backend of a target a listing revealed: the known one, or a new one under profile `core`. */
  learn(target: string): { backend: Backend; learned: boolean } {
    const known = this.#backends.get(target);
    if (known !== undefined) return { backend: known, learned: false };
    const backend: Backend = { backend: target, target, profile: 'core' };
    this.#backends.set(target, backend);
    return { backend, learned: true };
  }
}
