/**
 * Keyboard navigation as k9s users expect it: `/` focuses the search box, j/k move the selected
 * row, Enter opens it. Keys typed into a field are left alone (but Escape leaves the field).
 */
import { useEffect, useState } from 'preact/hooks';

function typing(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return t !== null && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
}

/** `/` → the page's `input[data-testid=search]`. Installed once by the app. */
export function installGlobalKeys(): void {
  addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && typing(e)) {
      // A search field would clear itself on Escape (and that clearing would become a filter change).
      e.preventDefault();
      (e.target as HTMLElement).blur();
    }
    if (e.key !== '/' || typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
    const search = document.querySelector<HTMLInputElement>('input[data-testid=search]');
    if (search) {
      e.preventDefault();
      search.focus();
      search.select();
    }
  });
}

/** The selected row of a list of `count` rows (-1: none); j/k move it, Enter calls `open`. */
export function useListKeys(count: number, open: (index: number) => void, resetKey: string): [number, (i: number) => void] {
  const [selected, setSelected] = useState(-1);
  useEffect(() => setSelected(-1), [resetKey]);
  useEffect(() => {
    const on = (e: KeyboardEvent) => {
      if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === 'j' || e.key === 'ArrowDown') {
        e.preventDefault();
        setSelected((s) => Math.min(count - 1, s + 1));
      } else if (e.key === 'k' || e.key === 'ArrowUp') {
        e.preventDefault();
        setSelected((s) => Math.max(0, s - 1));
      } else if (e.key === 'Enter' && selected >= 0) {
        e.preventDefault();
        open(selected);
      }
    };
    addEventListener('keydown', on);
    return () => removeEventListener('keydown', on);
  }, [count, selected, open]);
  return [selected, setSelected];
}
