import type { PodRecord } from '../kube/projections/index.js';

/**
 * C2: Succeeded or Failed, or being deleted with no container running (an empty status list
 * counts as not running). A deleting pod with a running container stays desired.
 */
export function isPodTerminated(pod: PodRecord): boolean {
  if (pod.phase === 'Succeeded' || pod.phase === 'Failed') return true;
  return pod.deletionTimestamp !== undefined && pod.allContainersNotRunning;
}
