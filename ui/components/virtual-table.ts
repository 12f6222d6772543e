/**
 * A table over a long list with a fixed row height: a spacer as tall as all rows gives the
 * scroll bar its true size, and only the rows in view (plus a margin) exist in the DOM, so 100k
 * rows cost what 40 do. The header is a second table with the same fixed column widths.
 *
 * The selected row (j/k) is scrolled into view; styles are set through the CSSOM, which the
 * page's Content-Security-Policy (no inline styles) allows.
 */
import { html } from 'htm/preact';
import type { ComponentChildren, VNode } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { WindowedRows } from '../windowed-rows.js';

export const ROW_HEIGHT = 34;
const OVERSCAN = 10;

export interface Column { label: string; width: string }

export function VirtualTable<T>(props: {
  rows: WindowedRows<T>;
  columns: Column[];
  renderRow: (row: T | undefined, index: number, selected: boolean) => VNode;
  selected: number;
  label: string;
  empty?: ComponentChildren;
}) {
  const { rows, columns, selected } = props;
  const box = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: 600 });
  const total = Math.max(0, rows.total);
  const first = Math.max(0, Math.floor(view.top / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(total, Math.ceil((view.top + view.height) / ROW_HEIGHT) + OVERSCAN);

  useLayoutEffect(() => {
    const el = box.current;
    if (el) setView({ top: el.scrollTop, height: el.clientHeight });
  }, []);
  useEffect(() => { rows.ensure(first, Math.max(last, first + 1)); }, [first, last, rows.total]);
  useEffect(() => {
    const el = box.current;
    if (!el || selected < 0) return;
    const y = selected * ROW_HEIGHT;
    if (y < el.scrollTop) el.scrollTop = y;
    else if (y + ROW_HEIGHT > el.scrollTop + el.clientHeight) el.scrollTop = y + ROW_HEIGHT - el.clientHeight;
  }, [selected]);

  const onScroll = (e: Event) => {
    const el = e.currentTarget as HTMLDivElement;
    setView({ top: el.scrollTop, height: el.clientHeight });
  };
  const cols = html`<colgroup>${columns.map((c) => html`<col style=${{ width: c.width }} />`)}</colgroup>`;
  const body: VNode[] = [];
  for (let i = first; i < last; i++) body.push(props.renderRow(rows.row(i), i, i === selected));

  return html`<div class="vt" role="region" aria-label=${props.label}>
    <table class="grid head">${cols}<thead><tr>${columns.map((c) => html`<th scope="col">${c.label}</th>`)}</tr></thead></table>
    ${rows.error ? html`<p class="error" role="alert">${rows.error}</p>` : null}
    ${rows.total === 0 ? html`<p class="empty">${props.empty ?? 'Nothing to show.'}</p>` : null}
    <div class="vt-scroll" ref=${box} onScroll=${onScroll} tabindex="-1">
      <div class="vt-spacer" style=${{ height: `${total * ROW_HEIGHT}px` }}>
        <table class="grid body" style=${{ transform: `translateY(${first * ROW_HEIGHT}px)` }}>${cols}<tbody>${body}</tbody></table>
      </div>
    </div>
  </div>`;
}

/** A row not fetched yet: same height, no data attributes (tests wait for real rows). */
export function PlaceholderRow(props: { columns: number }) {
  return html`<tr class="placeholder"><td colspan=${props.columns}>…</td></tr>`;
}
