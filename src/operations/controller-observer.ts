/**
 * ControllerObserver: what the reconciler and the operation executor tell a watcher about the
 * decisions they take (the dashboard's per-volume timeline and history annotations). Events name
 * volumes and nodes (ids are recycled) and carry no time: the observer stamps them on its clock.
 *
 * Contract: `observe` is called synchronously at the decision, on the main thread; it must be
 * cheap (O(1)) and must not touch the world state. Callers go through {@link notify}, so an
 * observer that throws never reaches a loop or an operation's bookkeeping.
 */
import type { OperationKind } from '../cache/world-state.js';

/** Why a detach was started without the live volumesInUse check (F9, F11). */
export type ForcedReason = 'timeout' | 'out-of-service';

export type ControllerEvent =
  | { readonly kind: 'desired-added' | 'desired-removed'; readonly volume: string; readonly node: string; readonly pod?: string }
  | { readonly kind: 'attach-started'; readonly volume: string; readonly node: string }
  | { readonly kind: 'detach-started'; readonly volume: string; readonly node: string; readonly forced?: ForcedReason }
  | { readonly kind: 'attach-succeeded' | 'detach-succeeded'; readonly volume: string; readonly node: string }
  | {
    readonly kind: 'attach-failed' | 'detach-failed'; readonly volume: string; readonly node: string;
    readonly error: string; readonly op: OperationKind;
    /** First instant a retry is allowed (I3), controller clock; absent when unknown. */
    readonly retryAt?: number;
  }
  | { readonly kind: 'multi-attach-blocked'; readonly volume: string; readonly node: string; readonly holders: readonly string[] };

export interface ControllerObserver {
  observe(event: ControllerEvent): void;
}

/** Calls the observer, if any; its errors are dropped (see the module header). */
export function notify(observer: ControllerObserver | undefined, event: () => ControllerEvent): void {
  if (observer === undefined) return;
  try {
    observer.observe(event());
  } catch {
    // An observer is a bystander: its failure must not change what the controller does.
  }
}
