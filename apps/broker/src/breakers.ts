import {
  BrokenCircuitError,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleWhen,
  type CircuitBreakerPolicy,
} from 'cockatiel';
import { BrokerError, quote } from './errors.js';

/** Consecutive backend faults that open a backend's circuit. */
const FAILURE_THRESHOLD = 3;

/** How long an open circuit refuses calls before one trial call goes through. */
const COOLDOWN_MS = 60_000;

/**
 * One cockatiel circuit breaker per backend target. Only the backend's faults
 * count (timeouts, connection errors, 5xx; see {@link isRetryableError}).
 * After {@link FAILURE_THRESHOLD} in a row the circuit opens for
 * {@link COOLDOWN_MS}; then one trial call goes through, and calls made while
 * it runs are refused.
 */
export class BackendBreakers {
  readonly #policies = new Map<string, CircuitBreakerPolicy>();

  constructor(private readonly log: (line: string) => void) {}

  /** Runs `call` through the target's breaker: an open circuit (or a trial in progress) throws `CIRCUIT_OPEN` without running it. */
  async execute<T>(
    target: string,
    toolName: string,
    call: () => Promise<T>,
  ): Promise<T> {
    const policy = this.#policyFor(target);
    if (policy.state === CircuitState.HalfOpen) {
      // cockatiel would queue this call behind the trial; an agent is better served by an answer now.
      throw new BrokerError({
        code: 'CIRCUIT_OPEN',
        toolName,
        isRetryable: true,
        message: `Backend ${quote(target)} is paused after ${FAILURE_THRESHOLD} failures in a row; a trial call is testing it now. Use another tool or retry in a few seconds.`,
      });
    }
    try {
      return await policy.execute(call);
    } catch (error) {
      if (error instanceof BrokenCircuitError)
        throw new BrokerError({
          code: 'CIRCUIT_OPEN',
          toolName,
          isRetryable: true,
          message: `Backend ${quote(target)} failed ${FAILURE_THRESHOLD} times in a row and is paused for ${this.#secondsLeft(policy)} s more. Use another tool or retry later.`,
          cause: error,
        });
      throw error;
    }
  }

  /** Seconds until an open circuit lets its trial call through, from cockatiel's own state. */
  #secondsLeft(policy: CircuitBreakerPolicy): number {
    const { ownState } = policy.toJSON() as {
      ownState: { value: CircuitState; openedAt?: number };
    };
    const openedAt = ownState.openedAt ?? Date.now();
    return Math.max(1, Math.ceil((openedAt + COOLDOWN_MS - Date.now()) / 1000));
  }

  #policyFor(target: string): CircuitBreakerPolicy {
    let policy = this.#policies.get(target);
    if (policy !== undefined) return policy;
    const counter = new ConsecutiveBreaker(FAILURE_THRESHOLD);
    policy = circuitBreaker(handleWhen(isRetryableError), {
      halfOpenAfter: COOLDOWN_MS,
      breaker: counter,
    });
    policy.onBreak(() =>
      this.log(`circuit: backend "${target}" opened after repeated failures`),
    );
    policy.onReset(() => {
      // A trial that ended without a counted fault closes the circuit; count afresh.
      counter.success();
      this.log(`circuit: backend "${target}" closed again`);
    });
    this.#policies.set(target, policy);
    return policy;
  }
}

/** Errors that say so are taken at their word; unknown errors count as backend faults. */
export function isRetryableError(error: unknown): boolean {
  if (typeof error === 'object' && error !== null && 'isRetryable' in error)
    return (error as { isRetryable: unknown }).isRetryable === true;
  return true;
}
