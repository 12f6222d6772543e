/**
 * Differential tests: every scenario of ./differential/scenarios.ts runs once
 * with upstream kube-controller-manager (only the attach/detach controller) and once with
 * fleet-attach, each on a fresh etcd + kube-apiserver, driven by the same deterministic driver.
 * What the API server saw (VolumeAttachment creates and deletes per PV and node, every node's
 * final status.volumesAttached, the VolumeAttachments left, the distinct Events) must agree, or
 * differ only as a deviation listed in docs/deviations.md (see ./differential/known-differences.ts). docs/differential.md describes the scenarios.
 *
 * The two runs of a scenario go side by side (two control planes at once) unless
 * FA_DIFF_SEQUENTIAL=1, and FA_DIFF_CONCURRENCY (default 2) scenarios run at once. Scenarios that need upstream's fixed 6-minute force-detach timer run
 * only with FA_SLOW_TESTS=1. FA_DIFF_ONLY=a,b runs only the named scenarios; FA_DIFF_OUT=DIR
 * writes both records of each scenario to DIR/<scenario>.json.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ensureBuilt } from '../e2e/spawn.js';
import { KNOWN_DIFFERENCES } from './differential/known-differences.js';
import { runScenario, type RunResult } from './differential/run.js';
import { SCENARIOS, type Scenario } from './differential/scenarios.js';

const slow = process.env.FA_SLOW_TESTS === '1';
const only = process.env.FA_DIFF_ONLY?.split(',').filter(Boolean);

async function runBoth(s: Scenario): Promise<{ kcm: RunResult; fa: RunResult }> {
  if (process.env.FA_DIFF_SEQUENTIAL === '1') {
    const kcm = await runScenario(s, 'kcm');
    const fa = await runScenario(s, 'fleet-attach');
    return { kcm, fa };
  }
  const [kcm, fa] = await Promise.allSettled([runScenario(s, 'kcm'), runScenario(s, 'fleet-attach')]);
  if (kcm.status === 'rejected') throw kcm.reason;
  if (fa.status === 'rejected') throw fa.reason;
  return { kcm: kcm.value, fa: fa.value };
}

// Scenarios run two at a time (four control planes): most of a run is waiting on timers.
const concurrency = Number(process.env.FA_DIFF_CONCURRENCY ?? 2);

describe('differential: fleet-attach against kube-controller-manager', { concurrency }, () => {
  before(() => ensureBuilt());

  it('every known difference names a scenario and its docs/deviations.md row', () => {
    const doc = readFileSync(new URL('../../docs/deviations.md', import.meta.url), 'utf8');
    const rows = doc.split('\n').filter((l) => l.startsWith('|'));
    for (const [name, known] of Object.entries(KNOWN_DIFFERENCES)) {
      assert.ok(SCENARIOS.some((s) => s.name === name), `known difference "${name}" names no scenario`);
      const row = rows.find((l) => l.startsWith(`| ${known.rule} |`) && (l.includes(`differential:${name}`) || (!!known.phrase && l.includes(known.phrase))));
      assert.ok(row, `docs/deviations.md has no row for rule ${known.rule} tagged differential:${name}${known.phrase ? ` or saying "${known.phrase}"` : ''}`);
    }
    for (const row of rows) {
      for (const m of row.matchAll(/differential:([a-z0-9-]+)/g)) assert.ok(KNOWN_DIFFERENCES[m[1]], `docs/deviations.md tags differential:${m[1]}, which is no known difference`);
    }
    const listed = readFileSync(new URL('../../docs/differential.md', import.meta.url), 'utf8');
    for (const s of SCENARIOS) assert.ok(listed.includes(`\`${s.name}\``), `docs/differential.md does not describe scenario ${s.name}`);
  });

  for (const s of SCENARIOS) {
    const skip = only && !only.includes(s.name) ? 'not in FA_DIFF_ONLY' : s.slow && !slow ? 'slow tier (6-minute force-detach timer): set FA_SLOW_TESTS=1' : false;
    it(s.name, { skip, timeout: s.slow ? 25 * 60_000 : 5 * 60_000 }, async (t) => {
      const { kcm, fa } = await runBoth(s);
      t.diagnostic(`kcm run ${(kcm.ms / 1000).toFixed(1)} s, fleet-attach run ${(fa.ms / 1000).toFixed(1)} s`);
      if (process.env.FA_DIFF_OUT) {
        mkdirSync(process.env.FA_DIFF_OUT, { recursive: true });
        writeFileSync(join(process.env.FA_DIFF_OUT, `${s.name}.json`), JSON.stringify({ kcm: kcm.record, 'fleet-attach': fa.record }, null, 2));
      }
      const known = KNOWN_DIFFERENCES[s.name];
      if (known) {
        // A known difference must still be one: once the records agree, the entry and its row go.
        assert.notDeepEqual(fa.record, kcm.record, `"${s.name}" now agrees with upstream: remove its entry from differential/known-differences.ts (and a differential:${s.name} tag from docs/deviations.md, if any)`);
        known.check?.(fa.record, kcm.record);
        assert.deepEqual(known.normalise(fa.record), known.normalise(kcm.record), `"${s.name}" differs beyond its listed deviation (${known.rule})`);
        return;
      }
      assert.deepEqual(fa.record, kcm.record, `fleet-attach (actual) and kube-controller-manager (expected) disagree in "${s.name}": ${s.title}`);
    });
  }
});
