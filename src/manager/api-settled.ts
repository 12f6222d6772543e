/**
 * Whether the controller's API calls have settled: none on the wire and none waiting for a
 * slot. A replica that stepped down waits for this before it releases its lease; calls still
 * queued are refused at the send (request-runner.ts `maySend`), so the wait is for the ones
 * already sent, each bounded by its request timeout.
 */
import type { KubeApiClient } from '../kube/api-client.js';

const POLL_MS = 20;

/** Resolves true once settled, false if `timeoutMs` passed first. */
export async function apiSettled(api: Pick<KubeApiClient, 'backlog'>, timeoutMs: number): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const b = api.backlog();
    if (b.inFlight === 0 && b.waiting === 0) return true;
    if (performance.now() >= end) return false;
    await new Promise<void>((r) => setTimeout(r, POLL_MS));
  }
}
