import type { Backend } from '@heretek/catalog';

/** The backend table: the configured backends plus any target a multiplexed listing revealed (discovery writes it). */
export class BackendRegistry {
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

  /** Known targets, configured ones first, in order (so too {@link all}). */
  targets(): IterableIterator<string> {
    return this.#backends.keys();
  }

  all(): IterableIterator<Backend> {
    return this.#backends.values();
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
