/**
 * AttachmentWaiter: waits for a VolumeAttachment to reach a verdict, driven by the cache's change
 * notifications instead of upstream's lister polling (L7). A wait costs one entry in a map and one
 * timer while it is pending, and nothing after it settles; the waiter listens to the cache only
 * while at least one wait is pending. This keeps thousands of concurrent attach waits cheap and
 * reacts to the watch as soon as the external-attacher writes the status.
 */
import type { VolumeAttachmentCache, VolumeAttachmentView } from './volume-attachment-deps.js';

/** A check's answer for the current cached state: keep waiting, succeed, or fail with a message. */
export type WaitVerdict = 'pending' | 'done' | { readonly error: string };

/** Inspects the cached VolumeAttachment (undefined = not in the cache) and decides. */
export type WaitCheck = (va: VolumeAttachmentView | undefined) => WaitVerdict;

export interface WaitRequest {
  readonly name: string;
  readonly check: WaitCheck;
  readonly timeoutMs: number;
  /** Builds the rejection when the timeout elapses first. */
  readonly onTimeout: () => Error;
  /** Builds the rejection for a `{ error }` verdict. */
  readonly onError: (message: string) => Error;
}

export interface AttachmentWaiter {
  /** Resolves on `done`, rejects on an error verdict, the timeout or {@link close}. The check runs at once, then on every change of `name`. */
  wait(request: WaitRequest): Promise<void>;
  /** Number of waits pending. */
  pending(): number;
  /** Rejects every pending wait with `reason` (shutdown: in-flight operations are abandoned). */
  close(reason: Error): void;
}

export function createAttachmentWaiter(deps: { cache: VolumeAttachmentCache }): AttachmentWaiter {
  return new Waiter(deps.cache);
}

interface PendingWait {
  readonly request: WaitRequest;
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
  timer: NodeJS.Timeout | undefined;
}

class Waiter implements AttachmentWaiter {
  private readonly byName = new Map<string, Set<PendingWait>>();
  private count = 0;
  private unsubscribe: (() => void) | undefined;
  /** Set by close(): later waits are rejected at once (no timer keeps a stopping process alive). */
  private closedWith: Error | undefined;

  constructor(private readonly cache: VolumeAttachmentCache) {}

  wait(request: WaitRequest): Promise<void> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    return new Promise<void>((resolve, reject) => {
      const w: PendingWait = { request, resolve, reject, timer: undefined };
      // Judge the current state first: the change that settles it may already be in the cache.
      if (this.settle(w)) return;
      w.timer = setTimeout(() => this.finish(w, request.onTimeout()), request.timeoutMs);
      let set = this.byName.get(request.name);
      if (!set) this.byName.set(request.name, (set = new Set()));
      set.add(w);
      this.count++;
      this.unsubscribe ??= this.cache.onChange((name) => this.changed(name));
    });
  }

  pending(): number {
    return this.count;
  }

  close(reason: Error): void {
    this.closedWith = reason;
    for (const set of [...this.byName.values()]) for (const w of [...set]) this.finish(w, reason);
  }

  private changed(name: string): void {
    const set = this.byName.get(name);
    if (!set) return;
    for (const w of [...set]) this.settle(w);
  }

  /** Runs the check; settles and forgets the wait unless it is still pending. True when settled. */
  private settle(w: PendingWait): boolean {
    let verdict: WaitVerdict;
    try {
      verdict = w.request.check(this.cache.get(w.request.name));
    } catch (err) {
      verdict = { error: err instanceof Error ? err.message : String(err) };
    }
    if (verdict === 'pending') return false;
    this.finish(w, verdict === 'done' ? undefined : w.request.onError(verdict.error));
    return true;
  }

  private finish(w: PendingWait, err: Error | undefined): void {
    if (w.timer !== undefined) clearTimeout(w.timer);
    const set = this.byName.get(w.request.name);
    if (set?.delete(w)) {
      this.count--;
      if (set.size === 0) this.byName.delete(w.request.name);
      if (this.count === 0 && this.unsubscribe) {
        this.unsubscribe();
        this.unsubscribe = undefined;
      }
    }
    if (err) w.reject(err);
    else w.resolve();
  }
}
