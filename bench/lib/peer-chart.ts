/**
 * The peer bench's chart (bench/results/peer.svg): fleet-attach ÷ upstream kube-controller-manager
 * at the same client qps, one bar per fleet (target and size) for each figure; below 1 is
 * fleet-attach lower (faster, leaner, fewer requests).
 */
import { writeFileSync } from 'node:fs';
import type { PeerRun } from './peer-run.js';
import { barChart } from './svg-chart.js';

export const PEER_FIGURES: ReadonlyArray<{ key: keyof PeerRun | 'api_total'; label: string }> = [
  { key: 'converge_s', label: 'cold start' },
  { key: 'cpu_s', label: 'CPU s' },
  { key: 'peak_rss_mb', label: 'peak RSS' },
  { key: 'pod_to_va_p50_ms', label: 'pod→VA p50' },
  { key: 'pod_to_va_p99_ms', label: 'pod→VA p99' },
  { key: 'detach_all_s', label: 'detach all' },
  { key: 'api_total', label: 'API requests' },
];

export const apiTotal = (r: PeerRun): number | null => (r.api_requests ? Object.values(r.api_requests).reduce((a, b) => a + b, 0) : null);

function figure(r: PeerRun, key: (typeof PEER_FIGURES)[number]['key']): number | null {
  const v = key === 'api_total' ? apiTotal(r) : r[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** fleet-attach ÷ upstream for each pair of runs on the same fleet at the same qps. */
export function peerRatios(runs: readonly PeerRun[]): Array<{ fleet: string; qps: number; ratios: Array<number | null> }> {
  const out: Array<{ fleet: string; qps: number; ratios: Array<number | null> }> = [];
  for (const fa of runs.filter((r) => r.controller === 'fleet-attach')) {
    const up = runs.find((r) => r.controller === 'upstream' && r.target === fa.target && r.nodes === fa.nodes && r.qps === fa.qps);
    if (!up) continue;
    out.push({
      fleet: `${fa.target} ${fa.nodes >= 1000 ? `${Math.round(fa.nodes / 1000)}k` : fa.nodes} nodes`,
      qps: fa.qps,
      ratios: PEER_FIGURES.map(({ key }) => {
        const a = figure(fa, key);
        const b = figure(up, key);
        return a !== null && b !== null && b > 0 ? Math.round((a / b) * 1000) / 1000 : null;
      }),
    });
  }
  return out;
}

/** Writes peer.svg into `dir`; returns its name, or undefined without a pair to compare. */
export function writePeerChart(dir: URL, runs: readonly PeerRun[], subtitle: string): string | undefined {
  const ratios = peerRatios(runs);
  if (ratios.length === 0) return undefined;
  const svg = barChart({
    title: 'fleet-attach ÷ upstream attach/detach controller (kube-controller-manager v1.37), same fleet, same client qps',
    subtitle,
    yLabel: 'fleet-attach ÷ upstream (below 1: fleet-attach lower)',
    groups: PEER_FIGURES.map((f) => f.label),
    series: ratios.map((r) => ({ name: `${r.fleet}, qps ${r.qps}`, values: r.ratios })),
    yFormat: (v) => (v >= 10 ? String(Math.round(v)) : v >= 1 ? v.toFixed(1) : v.toFixed(2)),
  });
  writeFileSync(new URL('peer.svg', dir), svg);
  return 'peer.svg';
}
