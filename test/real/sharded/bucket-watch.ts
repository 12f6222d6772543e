/**
 * The test's own record of who held each bucket: a list+watch (admin kubeconfig) of the bucket
 * Leases (`fleet-attach.io/kind=bucket` in the Lease namespace), each change kept with its
 * resourceVersion, the holder it names ('' when free or deleted) and when it arrived. A watch
 * delivers every committed version of the objects it follows in order, so as long as it is not
 * relisted (counted: `relists` must stay 0 for the record to be whole) the record is the
 * complete ownership history, ordered by etcd's revision like every other write.
 */
import { loadKubeConfig } from '../../../src/kube/kube-config.js';
import { createReflector, type Reflector } from '../../../src/kube/reflector.js';
import { BUCKET_KIND, BUCKET_LEASE_PREFIX, KIND_LABEL } from '../../../src/sharding/bucket-leases.js';

export interface Holding {
  holder: string;
  /** resourceVersion of the Lease version that says so. */
  rv: number;
  /** When the watch delivered it (Date.now()). */
  at: number;
}

interface SeenLease {
  name: string;
  holder: string;
  rv: number;
}

export interface BucketWatch {
  /** Ownership changes of bucket `b`, in resourceVersion order. */
  history(b: number): readonly Holding[];
  /** Who held bucket `b` just before resourceVersion `rv` ('' when nobody). */
  holderAt(b: number, rv: number): string;
  /** Bucket → holder now, as far as the watch has delivered. */
  current(): Map<number, string>;
  /** Buckets `id` holds now. */
  heldBy(id: string): number[];
  /** Versions where a bucket went from `holder` straight to another holder (a take-over, not after a release). */
  takenFrom(holder: string): Array<{ bucket: number; rv: number; by: string }>;
  relists(): number;
  stop(): Promise<void>;
}

export async function startBucketWatch(o: { kubeconfig: string; namespace: string; buckets: number }): Promise<BucketWatch> {
  const kc = loadKubeConfig({ path: o.kubeconfig });
  const width = Math.max(4, String(o.buckets - 1).length);
  const bucketOf = (name: string) => {
    const digits = name.slice(BUCKET_LEASE_PREFIX.length);
    return name.startsWith(BUCKET_LEASE_PREFIX) && digits.length === width && /^\d+$/.test(digits) ? Number(digits) : -1;
  };
  const histories = new Map<number, Holding[]>();
  const record = (s: SeenLease, deleted: boolean) => {
    const b = bucketOf(s.name);
    if (b < 0 || b >= o.buckets) return;
    const list = histories.get(b) ?? [];
    const holder = deleted ? '' : s.holder;
    // A relist re-delivers the version it already had: keep one entry per version.
    if (list.length > 0 && list[list.length - 1]!.rv >= s.rv && !deleted) return;
    list.push({ holder, rv: s.rv, at: Date.now() });
    histories.set(b, list);
  };
  const reflector: Reflector<SeenLease> = createReflector<SeenLease>({
    kc,
    labelSelector: `${KIND_LABEL}=${BUCKET_KIND}`,
    backoff: { initialMs: 100, maxMs: 1000 },
    kind: {
      resource: 'leases',
      path: `/apis/coordination.k8s.io/v1/namespaces/${o.namespace}/leases`,
      namespaced: true,
      project(raw) {
        const l = raw as { metadata?: { name?: string; resourceVersion?: string }; spec?: { holderIdentity?: string } };
        if (typeof l?.metadata?.name !== 'string') return { ok: false, reason: 'metadata.name missing' };
        return { ok: true, value: { name: l.metadata.name, holder: l.spec?.holderIdentity ?? '', rv: Number(l.metadata.resourceVersion ?? 0) } };
      },
    },
  });
  reflector.addHandler({ add: (s) => record(s, false), update: (s) => record(s, false), delete: (s) => record(s, true) });
  void reflector.start();
  await new Promise<void>((ok) => reflector.onSynced(ok));

  const current = () => {
    const out = new Map<number, string>();
    for (const [b, list] of histories) {
      const last = list[list.length - 1];
      if (last && last.holder !== '') out.set(b, last.holder);
    }
    return out;
  };
  return {
    history: (b) => histories.get(b) ?? [],
    holderAt(b, rv) {
      let holder = '';
      for (const h of histories.get(b) ?? []) {
        if (h.rv >= rv) break;
        holder = h.holder;
      }
      return holder;
    },
    current,
    heldBy: (id) => [...current()].filter(([, h]) => h === id).map(([b]) => b).sort((a, b) => a - b),
    takenFrom(holder) {
      const out: Array<{ bucket: number; rv: number; by: string }> = [];
      for (const [bucket, h] of histories) {
        for (let i = 1; i < h.length; i++) if (h[i - 1]!.holder === holder && h[i]!.holder !== '' && h[i]!.holder !== holder) out.push({ bucket, rv: h[i]!.rv, by: h[i]!.holder });
      }
      return out.sort((a, b) => a.rv - b.rv);
    },
    relists: () => reflector.stats().relists,
    async stop() {
      await reflector.stop();
      kc.close();
    },
  };
}
