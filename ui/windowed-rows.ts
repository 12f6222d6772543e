/**
 * Rows of a long server-side list held as a few windows: pages of {@link WINDOW} rows fetched
 * by offset as the table scrolls, at most {@link MAX_PAGES} kept (the ones nearest the last
 * requested range), so the browser never holds the fleet. `reload()` (an `invalidate` from the
 * stream, a reconnect) refetches the pages on screen and drops the rest; rows stay visible until
 * their replacement arrives.
 */
import { useEffect, useReducer, useRef } from 'preact/hooks';
import { WINDOW, type Window } from './api.js';

const MAX_PAGES = 3;

export interface WindowedRows<T> {
  /** -1 until the first window arrived. */
  total: number;
  /** Date.now() when the newest window arrived (countdowns start there). */
  receivedAt: number;
  error: string | undefined;
  row(i: number): T | undefined;
  /** Makes rows [start, end) available (fetching what is missing). */
  ensure(start: number, end: number): void;
  reload(): void;
}

interface Store<T> {
  key: string;
  gen: number;
  pages: Map<number, T[]>;
  pending: Set<number>;
  total: number;
  receivedAt: number;
  error: string | undefined;
  range: [number, number];
}

export function useWindowedRows<T>(key: string, fetchWindow: (offset: number, limit: number) => Promise<Window<T>>): WindowedRows<T> {
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  const fresh = (): Store<T> => ({ key, gen: 0, pages: new Map(), pending: new Set(), total: -1, receivedAt: 0, error: undefined, range: [0, WINDOW] });
  const ref = useRef<Store<T>>(fresh());
  if (ref.current.key !== key) ref.current = fresh();
  const s = ref.current;
  const fetchRef = useRef(fetchWindow);
  fetchRef.current = fetchWindow;

  function load(page: number, store: Store<T>): void {
    const gen = store.gen;
    store.pending.add(page);
    fetchRef.current(page * WINDOW, WINDOW).then((w) => {
      if (ref.current !== store || store.gen !== gen) return;
      store.pending.delete(page);
      store.pages.set(page, w.items);
      store.total = w.total;
      store.receivedAt = Date.now();
      store.error = undefined;
      evict(store);
      redraw(0);
    }, (e: unknown) => {
      if (ref.current !== store || store.gen !== gen) return;
      store.pending.delete(page);
      store.error = e instanceof Error ? e.message : String(e);
      redraw(0);
    });
  }

  function evict(store: Store<T>): void {
    if (store.pages.size <= MAX_PAGES) return;
    const centre = (store.range[0] + store.range[1]) / 2 / WINDOW;
    const far = [...store.pages.keys()].sort((a, b) => Math.abs(b - centre) - Math.abs(a - centre));
    for (const p of far.slice(0, store.pages.size - MAX_PAGES)) store.pages.delete(p);
  }

  const api: WindowedRows<T> = {
    total: s.total,
    receivedAt: s.receivedAt,
    error: s.error,
    row(i) {
      return s.pages.get(Math.floor(i / WINDOW))?.[i % WINDOW];
    },
    ensure(start, end) {
      s.range = [start, end];
      const last = s.total < 0 ? 0 : Math.max(0, Math.min(end, s.total) - 1);
      for (let p = Math.floor(Math.max(0, start) / WINDOW); p <= Math.floor(last / WINDOW); p++) {
        if (!s.pages.has(p) && !s.pending.has(p)) load(p, s);
      }
    },
    reload() {
      s.gen++;
      s.pending.clear();
      const first = Math.floor(Math.max(0, s.range[0]) / WINDOW);
      const last = Math.floor(Math.max(0, s.range[1] - 1) / WINDOW);
      for (const p of [...s.pages.keys()]) if (p < first || p > last) s.pages.delete(p);
      for (let p = first; p <= last; p++) load(p, s);
    },
  };
  useEffect(() => { api.ensure(s.range[0], s.range[1]); }, [key]);
  return api;
}
