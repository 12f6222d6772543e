/**
 * Reading list pages on one thread, side by side in one run: the ways the controller can turn a
 * page's bytes into store entries (list-page.ts, --list-reader), over pod pages of two shapes.
 *
 *   inline  the bytes decoded as UTF-8, JSON.parse of the whole page, the projections;
 *   sieve   the JSON sieve first (kube/sieve), then JSON.parse and the projections of what it kept;
 *           `sieve_pass` is the WebAssembly pass alone (with the copy in and the text out);
 *   worker  what a worker does (inline, then the page encoded as compact JSON) and, apart, what
 *           the main thread then does (decodePage): the worker reader's two halves;
 *           `worker_sieve_side` is a worker's half of the default reader (sieve, then encoded).
 *
 * Shapes: `sim`, the simulator's pods (small: every field the controller reads and few others);
 * `production`, the same pods with what a Deployment's pod carries on a real cluster (managed
 * fields, labels and annotations, an owner, a container with env, resources, probes and mounts,
 * the service-account token volume, tolerations, conditions, addresses; about 5.5 KB). The
 * production shape is written here from the fields of the core/v1 Pod type, not copied from any
 * cluster.
 *
 * Each reader runs `--rounds` times in turn over the same pages (after one warm-up round each);
 * figures are medians, in ms per 100k pods, and ratios to inline from the same rounds.
 *
 *   npm run bench:list-read [-- --pods 50000 --page-size 5000 --rounds 5 --out FILE]
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { decodePage, encodePage, projectPage, readPageBytes } from '../src/kube/list-page.js';
import { POD_KIND } from '../src/kube/projections/pod.js';
import { createJsonSieve } from '../src/kube/sieve/json-sieve.js';
import { listKeepSpec } from '../src/kube/sieve/keep-spec.js';
import { podObject } from '../src/sim/actors/objects.js';
import { commandLine } from './lib/args.js';
import { median } from './lib/stats.js';

type Shape = 'sim' | 'production';
const READERS = ['inline', 'sieve', 'sieve_pass', 'worker_side', 'worker_sieve_side', 'main_side'] as const;
type Reader = (typeof READERS)[number];

const NOW = '2026-11-23T10:00:00Z';

function simPod(i: number): Record<string, unknown> {
  const node = `node-${String(Math.floor(i / 10)).padStart(6, '0')}`;
  const name = `pod-${String(i).padStart(7, '0')}`;
  const pod = podObject('fleet', name, node, [`data-${name}`], NOW) as Record<string, any>;
  pod.metadata.uid = `0b5e${String(i).padStart(8, '0')}-1c2d-4e5f-8a9b-0123456789ab`;
  pod.metadata.resourceVersion = String(1000 + i);
  pod.metadata.creationTimestamp = NOW;
  return pod;
}

function productionPod(i: number): Record<string, unknown> {
  const pod = simPod(i) as Record<string, any>;
  const hash = (7_000_000 + i).toString(36);
  const fields = (keys: string[]) => Object.fromEntries(keys.map((k) => [`f:${k}`, {}]));
  Object.assign(pod.metadata, {
    generateName: 'web-7d9f8c6b5-',
    labels: { app: 'web', 'app.kubernetes.io/name': 'web', 'app.kubernetes.io/instance': 'web-prod', 'pod-template-hash': '7d9f8c6b5', tier: 'frontend' },
    annotations: { 'kubectl.kubernetes.io/restartedAt': NOW, 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9f8c6b5', uid: '5f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b', controller: true, blockOwnerDeletion: true }],
    managedFields: [
      { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: NOW, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:generateName': {}, 'f:labels': fields(['app', 'pod-template-hash', 'tier']), 'f:ownerReferences': {} }, 'f:spec': { 'f:containers': { 'k:{"name":"app"}': fields(['env', 'image', 'imagePullPolicy', 'name', 'ports', 'readinessProbe', 'resources', 'terminationMessagePath', 'volumeMounts']) }, ...fields(['dnsPolicy', 'enableServiceLinks', 'restartPolicy', 'schedulerName', 'securityContext', 'terminationGracePeriodSeconds', 'volumes']) } } },
      { manager: 'kubelet', operation: 'Update', apiVersion: 'v1', time: NOW, fieldsType: 'FieldsV1', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': fields(['ContainersReady', 'Initialized', 'PodReadyToStartContainers', 'PodScheduled', 'Ready']), ...fields(['containerStatuses', 'hostIP', 'hostIPs', 'phase', 'podIP', 'podIPs', 'startTime']) } } },
    ],
  });
  const tokenVolume = `kube-api-access-${hash.slice(-5)}`;
  pod.spec.volumes.push({ name: tokenVolume, projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }, { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } }] } });
  pod.spec.containers = [{
    name: 'app', image: 'registry.example.com/web/app:v1.42.0', imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { name: 'metrics', containerPort: 9090, protocol: 'TCP' }],
    env: Array.from({ length: 8 }, (_, k) => ({ name: `APP_SETTING_${k}`, value: `value-${k}` })).concat([{ name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } } as never]),
    resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '512Mi' } },
    readinessProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    volumeMounts: [{ name: 'data', mountPath: '/var/lib/app' }, { name: tokenVolume, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }],
    terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File',
  }];
  Object.assign(pod.spec, {
    restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', serviceAccountName: 'default', serviceAccount: 'default',
    securityContext: {}, schedulerName: 'default-scheduler', priority: 0, enableServiceLinks: true, preemptionPolicy: 'PreemptLowerPriority',
    tolerations: [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ],
  });
  const condition = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: NOW });
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  Object.assign(pod.status, {
    conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(condition),
    hostIP: '192.168.4.17', hostIPs: [{ ip: '192.168.4.17' }], podIP: ip, podIPs: [{ ip }], startTime: NOW, qosClass: 'Burstable',
    containerStatuses: [{
      name: 'app', state: { running: { startedAt: NOW } }, lastState: {}, ready: true, restartCount: 0, started: true,
      image: 'registry.example.com/web/app:v1.42.0', imageID: 'registry.example.com/web/app@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      containerID: `containerd://${hash.padStart(64, '0')}`,
    }],
  });
  return pod;
}

function pages(shape: Shape, pods: number, pageSize: number): Buffer[] {
  const make = shape === 'sim' ? simPod : productionPod;
  const out: Buffer[] = [];
  for (let at = 0; at < pods; at += pageSize) {
    const items = Array.from({ length: Math.min(pageSize, pods - at) }, (_, k) => make(at + k));
    const metadata = at + pageSize < pods ? { resourceVersion: '99999', continue: `token-${at}` } : { resourceVersion: '99999' };
    out.push(Buffer.from(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata, items })));
  }
  return out;
}

function main(): void {
  const cli = commandLine('bench:list-read', {
    pods: { type: 'string', default: '50000', help: 'pods listed' },
    'page-size': { type: 'string', default: '5000', help: 'pods per page' },
    rounds: { type: 'string', default: '5', help: 'measured rounds of every reader' },
    out: { type: 'string', arg: 'FILE', help: 'results file (default bench/results/list-read.json)' },
  });
  const values = cli.values;
  const podCount = cli.int('pods'), pageSize = cli.int('page-size'), rounds = cli.int('rounds');
  const sieve = createJsonSieve();
  const per100k = 100_000 / podCount;
  const result: Record<string, unknown> = { bench: 'list-read', command: cli.command, pods: podCount, page_size: pageSize, rounds };
  for (const shape of ['sim', 'production'] as const) {
    const bodies = pages(shape, podCount, pageSize);
    const bytes = bodies.reduce((n, b) => n + b.length, 0);
    let kept = 0;
    for (const b of bodies) {
      const r = sieve.sieve(listKeepSpec(POD_KIND.keep!), b);
      if (!r.ok) throw new Error(`the sieve refused a ${shape} page: ${r.status}`);
      kept += r.bytes;
    }
    let encoded: string[] = [];
    const run: Record<Reader, () => number> = {
      inline: () => bodies.reduce((n, b) => n + projectPage(POD_KIND, b.toString('utf8')).items.length, 0),
      sieve: () => bodies.reduce((n, b) => n + readPageBytes(POD_KIND, b, sieve).items.length, 0),
      sieve_pass: () => {
        for (const b of bodies) if (!sieve.sieve(listKeepSpec(POD_KIND.keep!), b).ok) return 0;
        return podCount;
      },
      worker_side: () => {
        encoded = bodies.map((b) => encodePage(projectPage(POD_KIND, b.toString('utf8'))));
        return podCount;
      },
      worker_sieve_side: () => {
        encoded = bodies.map((b) => encodePage(readPageBytes(POD_KIND, b, sieve)));
        return podCount;
      },
      main_side: () => encoded.reduce((n, t) => n + decodePage(POD_KIND, t).items.length, 0),
    };
    const times = Object.fromEntries(READERS.map((r) => [r, [] as number[]])) as Record<Reader, number[]>;
    for (let round = -1; round < rounds; round++) {
      for (const reader of READERS) {
        const t0 = performance.now();
        const n = run[reader]();
        const ms = performance.now() - t0;
        if (n !== podCount) throw new Error(`${reader} read ${n} pods of ${podCount}`);
        if (round >= 0) times[reader].push(ms);
      }
    }
    const ms = Object.fromEntries(READERS.map((r) => [r, +((median(times[r]) ?? NaN) * per100k).toFixed(1)])) as Record<Reader, number>;
    // Per round, so that a slow moment of the machine weighs on both sides of a ratio.
    const ratio = (r: Reader) => +(median(times[r].map((t, k) => t / times.inline[k]!)) ?? NaN).toFixed(3);
    result[shape] = {
      mb: +(bytes / 2 ** 20).toFixed(1),
      bytes_per_pod: Math.round(bytes / podCount),
      sieve_kept_fraction: +(kept / bytes).toFixed(3),
      ms_per_100k_pods: ms,
      to_inline: Object.fromEntries(READERS.filter((r) => r !== 'inline').map((r) => [r, ratio(r)])),
    };
  }
  result.date = new Date().toISOString();
  result.loadavg_at_end = loadavg().map((l) => +l.toFixed(2));
  const text = JSON.stringify(result, null, 2);
  console.log(text);
  writeFileSync(values.out ?? new URL('results/list-read.json', import.meta.url), text + '\n');
}

main();
