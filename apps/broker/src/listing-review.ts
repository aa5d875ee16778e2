import type {
  CachedAdmission,
  CachedListing,
  Reviewed,
} from './index-cache.js';
import type { TrustLayer } from './trust/trust-layer.js';
import type { GatewayTool } from './types.js';

/**
 * The trust layer's side of discovery: each listing pinned and cleaned
 * before it reaches the catalog, and which cached backends may be served at
 * start. It waits for the trust layer while its pins file opens.
 */
export class ListingReview {
  readonly #trust: Promise<TrustLayer | undefined>;
  readonly #reviews = new Map<string, Promise<unknown>>();
  /** Pins file writes of reviewed listings still running: {@link pinsWritten} waits for them. */
  readonly #pinWrites = new Set<Promise<void>>();

  constructor(trust: Promise<TrustLayer | undefined>) {
    this.#trust = trust;
  }

  /**
   * Reviews one backend's listing through the trust layer, one listing of a
   * backend at a time, so the trust layer and the catalog see the same
   * listing. The pins file is written in the background (the backend's next
   * review and {@link pinsWritten} wait for it).
   */
  review(target: string, tools: readonly GatewayTool[]): Promise<Reviewed> {
    const previous = this.#reviews.get(target) ?? Promise.resolve();
    let pinned: Promise<void> = Promise.resolve();
    const run = previous
      .catch(() => {})
      .then(async (): Promise<Reviewed> => {
        const trust = await this.#trust;
        if (trust === undefined) return { tools };
        const review = trust.reviewListingNow({ target, tools });
        pinned = review.pinned;
        this.#pinWrites.add(pinned);
        void pinned.then(() => this.#pinWrites.delete(pinned));
        return {
          tools: review.tools as GatewayTool[],
          // Read in the same turn as the review: the next review of this target waits for this one.
          definitions: trust.listedToolHashes(target),
        };
      });
    this.#reviews.set(
      target,
      run.then(() => pinned),
    );
    return run;
  }

  /**
   * Which backends' cached parts may be served before a relisting (every
   * recorded hash equals its pin), and a hook recording the served ones.
   */
  async admitCached(
    listings: ReadonlyMap<string, CachedListing>,
  ): Promise<CachedAdmission> {
    const trust = await this.#trust;
    const admitted = new Set<string>();
    for (const [target, listing] of listings)
      if (trust === undefined || trust.matchesPins(listing.definitions))
        admitted.add(target);
    return {
      admitted,
      served: (target) => {
        const definitions = listings.get(target)?.definitions;
        if (trust !== undefined && definitions !== undefined)
          trust.restoreListing({ target, names: definitions.names });
      },
    };
  }

  /** Settles once the pins file writes started so far have ended. */
  async pinsWritten(): Promise<void> {
    await Promise.all(this.#pinWrites);
  }
}
