/**
 * Delivers committed events to the store's subscribers: synchronously, in commit order, each
 * event to every subscriber before the next. A write made by a subscriber while an event is
 * being delivered is queued behind it. A subscriber that throws is logged and skipped.
 *
 * An event delivered at once (not queued) lends subscribers the committed object itself
 * (`CommittedEvent.view()`), so that N subscribers of an event do not parse its JSON N times.
 * Queued events do not: the writer, itself a subscriber, gets the object back before they are
 * delivered and may change it.
 */
import { logger } from '../../log/logger.js';
import type { CommittedEvent } from './committed-event.js';
import type { KubeObject } from './sim-store.js';

const log = logger('sim-store');

export class CommitBus {
  private subscribers: Array<(ev: CommittedEvent) => void> = [];
  private readonly queue: CommittedEvent[] = [];
  private delivering = false;

  subscribe(fn: (ev: CommittedEvent) => void): () => void {
    this.subscribers = [...this.subscribers, fn];
    return () => {
      this.subscribers = this.subscribers.filter((s) => s !== fn);
    };
  }

  /** Delivers `ev`; `committed` is the object its JSON was serialised from. */
  deliver(ev: CommittedEvent, committed: KubeObject): void {
    this.queue.push(ev);
    if (this.delivering) return;
    this.delivering = true;
    ev.lend(committed);
    try {
      for (let i = 0; i < this.queue.length; i++) {
        const e = this.queue[i];
        for (const fn of this.subscribers) {
          try {
            fn(e);
          } catch (err) {
            log.error({ err, resource: e.resource, name: e.name }, 'store subscriber threw');
          }
        }
        e.releaseFrame();
      }
    } finally {
      ev.lend(undefined);
      this.queue.length = 0;
      this.delivering = false;
    }
  }
}
