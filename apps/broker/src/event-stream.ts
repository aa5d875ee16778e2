/** Receives each event of a stream, in the order they happen. */
type Listener<Event> = (event: Event) => void;

/**
 * A producer's events, as TanStack Query's `Subscribable`: `subscribe(listener)`
 * returns the function that ends the subscription, and the producer emits a
 * typed union of events. Listeners run synchronously, in subscription order.
 */
export class EventStream<Event> {
  readonly #listeners = new Set<Listener<Event>>();

  /** Gives every later event to `listener`; returns the unsubscribe. */
  readonly subscribe = (listener: Listener<Event>): (() => void) => {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  };

  /** Gives `event` to every listener. */
  emit(event: Event): void {
    for (const listener of this.#listeners) listener(event);
  }
}
