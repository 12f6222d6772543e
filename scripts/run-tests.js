#!/usr/bin/env node
// Runs every test/**/*.test.ts file with Node's test runner and tsx, but those under test/real/
// (they need the upstream binaries of `npm run upstream:build`) and test/browser/ (they need
// Debian's chromium); `--real` runs only the first, `--browser` only the second.
// Node 20's --test does not expand globs, so the file list is built here.
// Files run one at a time (--test-concurrency=1): integration tests start servers and
// worker pools, and two of them at once on a 2-core machine distort their timers. The folders of
// PURE hold tests that start no server, process or timer (pure functions, in-memory components
// on controlled clocks, the kernel's property tests): those run two at a time, first.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const TIERS = { '--real': join('test', 'real'), '--browser': join('test', 'browser') };
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
