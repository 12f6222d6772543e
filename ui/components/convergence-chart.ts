/**
 * Desired vs attached vs not-converged pairs over time (uPlot on a canvas). The samples come
 * from /api/v1/history, then one per `history` event. What the chart draws is also exposed as
 * attributes (`data-points`, `data-last-*`), so a test compares data with the API instead of
 * trusting pixels. Annotations (forced detaches, restarts…) are drawn as vertical lines and
 * listed under the chart.
 */
import { html } from 'htm/preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Annotation, HistorySample } from '../api.js';

const HEIGHT = 220;

function columns(samples: HistorySample[]): uPlot.AlignedData {
  return [
    samples.map((s) => s.t / 1000),
    samples.map((s) => s.desired),
    samples.map((s) => s.attached),
    samples.map((s) => s.notConverged),
  ];
}

export function ConvergenceChart(props: { samples: HistorySample[]; annotations: Annotation[] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const annotations = useRef<Annotation[]>(props.annotations);
  annotations.current = props.annotations;

  useEffect(() => {
    const el = box.current!;
    const opts: uPlot.Options = {
      width: Math.max(300, el.clientWidth),
      height: HEIGHT,
      scales: { x: { time: true } },
      legend: { live: false },
      axes: [{}, { size: 60 }],
      series: [
        {},
        { label: 'desired', stroke: '#3b6fd8', width: 2 },
        { label: 'attached', stroke: '#23864a', width: 2, dash: [6, 3] },
        { label: 'not converged', stroke: '#c0561a', width: 2, fill: 'rgba(192,86,26,0.08)' },
      ],
      hooks: {
        draw: [(u) => {
          const { ctx, bbox } = u;
          ctx.save();
          ctx.strokeStyle = '#7a5cc2';
          ctx.setLineDash([2, 3]);
          for (const a of annotations.current) {
            const x = Math.round(u.valToPos(a.t / 1000, 'x', true));
            if (x < bbox.left || x > bbox.left + bbox.width) continue;
            ctx.beginPath();
            ctx.moveTo(x, bbox.top);
            ctx.lineTo(x, bbox.top + bbox.height);
            ctx.stroke();
          }
          ctx.restore();
        }],
      },
    };
    const u = new uPlot(opts, columns(props.samples), el);
    plot.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(300, el.clientWidth), height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, []);

  useEffect(() => { plot.current?.setData(columns(props.samples)); }, [props.samples]);

  const last = props.samples[props.samples.length - 1];
  return html`<figure class="chart" data-testid="convergence-chart" data-points=${props.samples.length}
      data-last-desired=${last?.desired ?? ''} data-last-attached=${last?.attached ?? ''} data-last-not-converged=${last?.notConverged ?? ''}>
    <figcaption>Convergence: desired, attached and not-converged pairs${last ? html` — now ${last.desired} desired, ${last.attached} attached, ${last.notConverged} not converged` : ' — no samples yet'}</figcaption>
    <div ref=${box} class="chart-canvas"></div>
    ${props.annotations.length > 0 ? html`<ul class="annotations">${props.annotations.slice(-5).map((a) =>
      html`<li><time>${new Date(a.t).toLocaleTimeString()}</time> <b>${a.kind}</b> ${a.text}</li>`)}</ul>` : null}
  </figure>`;
}
