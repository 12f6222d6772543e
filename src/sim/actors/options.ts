/**
 * Options of the simulated fleet: what the generator builds and how the actors behave.
 * Every rate is per second of wall time; every latency is in milliseconds. The `sim`
 * command maps its flags (`--nodes`, `--attach-latency`, …) onto these one to one.
 */
import { fleetError } from '../../errors/index.js';

export interface FleetActorOptions {
  /** Seed of every random draw (generator, failures, churn, latency jitter). */
  seed: number;
  /** Ready nodes to generate; 0 gives an empty cluster. */
  nodes: number;
  /** Pods per node, each with its own bound PVC/PV pair. */
  podsPerNode: number;
  /** Fraction of generated volumes that are ReadWriteMany (the rest are ReadWriteOnce). */
  rwxFraction: number;
  /** CSI driver name of every generated volume, of the CSIDriver object and of the attacher. */
  driver: string;
  /** Run the CSI external-attacher. */
  attacher: boolean;
  attachLatencyMs: number;
  detachLatencyMs: number;
  /** Probability that one attach attempt fails with `status.attachError` (then retried with backoff). */
  attachFailureRate: number;
  /** Run the kubelets (volumesInUse, graceful pod deletion, node Leases). */
  kubelet: boolean;
  mountLatencyMs: number;
  unmountLatencyMs: number;
  /** Pod changes per second (delete, create with a new claim, or reschedule to another node). */
  churn: number;
  /** Node failures per second across the whole fleet (a Poisson process); 0 disables. */
  nodeFailureRate: number;
  /** How long a failed node stays NotReady before it recovers. */
  nodeRecoveryMs: number;
  /** Fraction of failed nodes that also get the `node.kubernetes.io/out-of-service` NoExecute taint. */
  outOfServiceFraction: number;
  /** Period of each node's Lease renewal, spread evenly; stretched so that at most 2000 Leases/s are written. */
  leaseRenewMs: number;
}

/** The simulator's defaults: a small fleet with every actor but churn and failures on. */
export const DEFAULT_FLEET_ACTOR_OPTIONS: Readonly<FleetActorOptions> = Object.freeze({
  seed: 1,
  nodes: 100,
  podsPerNode: 10,
  rwxFraction: 0.1,
  driver: 'sim.csi.fleet-attach.io',
  attacher: true,
  attachLatencyMs: 200,
  detachLatencyMs: 200,
  attachFailureRate: 0,
  kubelet: true,
  mountLatencyMs: 100,
  unmountLatencyMs: 100,
  churn: 0,
  nodeFailureRate: 0,
  nodeRecoveryMs: 60_000,
  outOfServiceFraction: 0,
  // kubelet's default: a 40 s lease renewed at a quarter of its duration.
  leaseRenewMs: 10_000,
});

type NumericKey = { [K in keyof FleetActorOptions]: FleetActorOptions[K] extends number ? K : never }[keyof FleetActorOptions];

const BOUNDS: Record<NumericKey, { min: number; max: number; integer?: boolean }> = {
  seed: { min: 0, max: 0xffffffff, integer: true },
  nodes: { min: 0, max: 10_000_000, integer: true },
  podsPerNode: { min: 0, max: 1000, integer: true },
  rwxFraction: { min: 0, max: 1 },
  attachLatencyMs: { min: 0, max: 3_600_000 },
  detachLatencyMs: { min: 0, max: 3_600_000 },
  attachFailureRate: { min: 0, max: 1 },
  mountLatencyMs: { min: 0, max: 3_600_000 },
  unmountLatencyMs: { min: 0, max: 3_600_000 },
  churn: { min: 0, max: 1_000_000 },
  nodeFailureRate: { min: 0, max: 1_000_000 },
  nodeRecoveryMs: { min: 0, max: 86_400_000 },
  outOfServiceFraction: { min: 0, max: 1 },
  leaseRenewMs: { min: 100, max: 3_600_000 },
};

// A DNS subdomain, as Kubernetes requires of CSI driver names.
const DRIVER_NAME = /^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/;

/**
 * Fills defaults and validates. Throws `FA_ERR_FLAG_INVALID` naming the offending field.
 * @example resolveFleetActorOptions({ nodes: 200, podsPerNode: 5, churn: 10 })
 */
export function resolveFleetActorOptions(partial: Partial<FleetActorOptions> = {}): FleetActorOptions {
  const opts: FleetActorOptions = { ...DEFAULT_FLEET_ACTOR_OPTIONS, ...partial };
  for (const [key, b] of Object.entries(BOUNDS) as Array<[NumericKey, { min: number; max: number; integer?: boolean }]>) {
    const v = opts[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < b.min || v > b.max || (b.integer && !Number.isInteger(v))) {
      throw fleetError('FA_ERR_FLAG_INVALID', `options.${key} must be ${b.integer ? 'an integer' : 'a number'} in [${b.min}, ${b.max}], got ${String(v)}`);
    }
  }
  if (typeof opts.driver !== 'string' || !DRIVER_NAME.test(opts.driver)) {
    throw fleetError('FA_ERR_FLAG_INVALID', `options.driver must be a DNS subdomain of at most 63 characters, got ${JSON.stringify(opts.driver)}`);
  }
  for (const key of ['attacher', 'kubelet'] as const) {
    if (typeof opts[key] !== 'boolean') throw fleetError('FA_ERR_FLAG_INVALID', `options.${key} must be a boolean`);
  }
  return opts;
}
