#!/usr/bin/env node
// Runs every test/**/*.test.ts file with Node's test runner and tsx, but those of the tiers:
// test/real/ (they need the upstream binaries of `npm run upstream:build`), test/browser/ (they
// need Debian's chromium), test/soak/ (minutes of faults and restarts) and test/long/ (a 2,000-node
// convergence, the packed package installed and run), kept out of the ten-minute suite;
// `--real`, `--browser`, `--soak` or `--long` runs only that tier.
// Node 20's --test does not expand globs, so the file list is built here.
// Files run one at a time (--test-concurrency=1): integration tests start servers and
// worker pools, and two of them at once on a 2-core machine distort their timers. The folders of
// PURE hold tests that start no server, process or timer (pure functions, in-memory components
// on controlled clocks, the kernel's property tests, HTTP routes through fastify's inject): those
// run two at a time, first.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const TIERS = { '--real': join('test', 'real'), '--browser': join('test', 'browser'), '--soak': join('test', 'soak'), '--long': join('test', 'long') };
const tier = Object.keys(TIERS).find((t) => process.argv.includes(t));
const only = process.argv.slice(2).filter((a) => !(a in TIERS));
const tierOf = (f) => Object.keys(TIERS).find((t) => f.startsWith(TIERS[t] + '/'));
function walk(dir, out) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith('.test.ts')) out.push(relative(root, p));
  }
  return out;
}
let files = walk(join(root, 'test'), [])
  .filter((f) => tierOf(f) === tier)
  .sort();
if (only.length) files = files.filter((f) => only.some((o) => f.includes(o)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const PURE = [
  'cache/', 'docs/', 'events/', 'invariants/', 'log/', 'metrics/', 'operations/', 'packed/', 'plugins/', 'populator/', 'statusupdater/',
  'kernel/abi', 'kernel/growth', 'kernel/invariants', 'kernel/plan-equivalence', 'kernel/planner.test', 'kernel/shard-descriptors',
  'sharding/assignment', 'sharding/bucket-hash', 'sharding/membership', 'sharding/schedules', 'sharding/shard-coordinator',
  'http/health', 'http/metrics.test', 'http/nodes', 'http/openapi', 'http/operations', 'http/session', 'http/summary', 'http/ui',
  'http/volumes', 'http/waiting-for', 'dashboard/history', 'dashboard/reason-codes', 'dashboard/routes', 'dashboard/stream',
  'dashboard/timeline', 'kube/api-client-fences-body', 'kube/h2-stream-table', 'kube/in-flight-limiter', 'kube/json-sieve',
  'kube/keep-from', 'kube/keep-spec-coverage', 'kube/light-async-bind', 'kube/list-page.test', 'kube/list-page-encoding', 'kube/packed-store',
  'kube/projection-codecs', 'kube/projection-store', 'kube/projections', 'kube/sieve-abi', 'kube/string-pool',
  'manager/adapters', 'manager/wire-metrics', 'reconciler/act-on-plan', 'reconciler/attach-hold', 'reconciler/attach-window',
  'reconciler/controller-clock', 'reconciler/detach-gate', 'reconciler/failing-passes', 'bench/latency-timeline',
  'bench/pod-va-commit-tracker', 'bench/pod-va-tracker', 'faults/fault-spec', 'fuzz/projections',
  'cli/flags', 'kube/kube-config', 'kube/rate-limiter', 'reconciler/api-room', 'reconciler/verify-attached', 'reconciler/wake',
  'sharding/chaos-checker', 'sharding/chaos-fault-schedule', 'sharding/guard-switches', 'sharding/peer-view',
  'sim/actors-delay-queue', 'sim/actors-fleet-index', 'sim/actors-generator', 'sim/attachment-table', 'sim/event-window',
  'sim/object-tables', 'sim/poisson-arrivals', 'sim/selectors', 'sim/sorted-slots', 'sim/store-bytes', 'sim/store.test', 'sim/write-log',
].map((d) => join('test', d));
const pure = files.filter((f) => PURE.some((d) => f.startsWith(d)));
const rest = files.filter((f) => !pure.includes(f));
let status = 0;
for (const [group, concurrency] of [[pure, 2], [rest, 1]]) {
  if (group.length === 0) continue;
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...group],
    { cwd: root, stdio: 'inherit' },
  );
  if ((r.status ?? 1) !== 0) status = r.status ?? 1;
}
process.exit(status);
