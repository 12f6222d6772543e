/**
 * The controller's client limits against the embedded simulator (`fleet-attach demo`,
 * `npm run bench:e2e`, `npm run bench:http`), where the flags' defaults are sized for a real
 * kube-apiserver shared with the rest of the control plane.
 *
 * - qps and burst: upstream's client-side limit (20 qps) would make a 50,000-volume fleet take
 *   40 minutes to attach; the simulator is local and nothing else uses it.
 * - in flight: with the default 96 a cold start at 50k nodes attached at 96 slots over a
 *   create's round trip (~30 ms) while the simulator sat ~30% idle. With 256 it takes the
 *   creates about as fast as it serves them: side by side at 50k (`npm run bench:e2e`), cold
 *   start 150 s against 162 and 169 s, a new pod's VolumeAttachment under churn in 122 ms (p50)
 *   against 484–497 ms. A real kube-apiserver serves 250 (Go's default) to 1,000 streams per
 *   HTTP/2 connection and 200 mutating requests at once for all its clients, which is why the
 *   flag's default stays at 96. The backlog bound stays at its default (500): 1,000 measured no
 *   faster, and a deeper queue is a longer wait when the server stalls.
 * - list page size: the initial sync of a 50k-node fleet (500k pods, PVCs and PVs) lists 1,000
 *   pages of each at 500 objects, and a page costs a round trip whatever its size. With 5,000
 *   objects a page, the controller against an idle simulator synced in 13.9 / 13.3 s against
 *   20.5 / 16.6 s (2,000: 15.7 s; 10,000: 14.5 s; at 10k nodes 2,000 took 2.8 / 2.7 s against
 *   3.7 / 3.2 s). The flag's default stays client-go's 500: a real kube-apiserver builds each page
 *   in memory, and a 5,000-pod page of real pods (managedFields and all) runs to tens of MB.
 *   `npm run bench:http` keeps the default: it measures the inspection API, and its results
 *   file is kept per subject (a changed controller configuration starts it afresh).
 */
export const SIMULATOR_CLIENT_SIZING = Object.freeze({
  kubeApiQps: 20_000,
  kubeApiBurst: 20_000,
  kubeApiMaxInFlight: 256,
  listPageSize: 5000,
});
