/**
 * The fault knobs the fleet actors consult on every decision, so that faults can change while
 * the fleet runs (src/sim/faults builds the implementation from a `--faults` spec). Every draw
 * happens behind this interface, which also counts the faults it injects.
 */
export interface FleetFaults {
  /** True when this attach attempt must fail with `status.attachError`. */
  attachFails(): boolean;
  /** True when this detach attempt must fail with `status.detachError` (finalizer kept, retried). */
  detachFails(): boolean;
  /** Extra milliseconds this detach takes (0 for most). */
  extraDetachMs(): number;
  /** Node flaps: rate per second across the fleet and how long a node stays NotReady; undefined when off. */
  flap(): { rate: number; downMs: number } | undefined;
  /** Node deletions: rate per second across the fleet, then pod GC and rejoin delays; undefined when off. */
  nodeDeletion(): { rate: number; gcMs: number; rejoinMs: number } | undefined;
  /** Pod changes per second on top of the fleet's own churn option. */
  churnRate(): number;
  /** Counts one injected fault the actors carried out themselves (flaps, deletions). */
  count(kind: 'flap' | 'delete-node'): void;
}

/** Knobs with every fault off. */
export const NO_FLEET_FAULTS: FleetFaults = {
  attachFails: () => false,
  detachFails: () => false,
  extraDetachMs: () => 0,
  flap: () => undefined,
  nodeDeletion: () => undefined,
  churnRate: () => 0,
  count: () => {},
};
