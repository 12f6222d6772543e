/**
 * Simulator conformance: every case of ./conformance/cases.ts and ./conformance/fence-cases.ts runs against the simulator and
 * against a real kube-apiserver (with etcd), and their normalised answers must be equal, or the
 * case must be a known difference listed in docs/conformance.md with its reason.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';
import { CASES as BASE_CASES } from './conformance/cases.js';
import { FENCE_CASES } from './conformance/fence-cases.js';
import { KNOWN_DIFFERENCES } from './conformance/known-differences.js';
import type { Target } from './conformance/target.js';
import { down, up, type RealCluster } from './real-cluster.js';

const CASES = [...BASE_CASES, ...FENCE_CASES];

describe('simulator conformance against kube-apiserver', () => {
  let dir = '';
  let real: RealCluster;
  let sim: Simulator;
  let targets: { sim: Target; real: Target };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fa-conformance-'));
    real = await up({ dir });
    sim = await startSimulator({ host: '127.0.0.1', port: 0 });
    const admin = readFileSync(real.adminKubeconfig, 'utf8');
    const token = /token: (\S+)/.exec(admin)?.[1] ?? '';
    const ca = Buffer.from(/certificate-authority-data: (\S+)/.exec(admin)?.[1] ?? '', 'base64').toString();
    targets = {
      sim: { name: 'sim', url: sim.url, token: sim.token, ca: sim.caPem ?? '' },
      real: { name: 'real', url: real.url, token, ca },
    };
  });

  after(async () => {
    await sim?.stop();
    await down(dir);
    await rm(dir, { recursive: true, force: true });
  });

  it('docs/conformance.md lists every known difference with its reason', () => {
    const doc = readFileSync(new URL('../../docs/conformance.md', import.meta.url), 'utf8');
    for (const name of Object.keys(KNOWN_DIFFERENCES)) assert.ok(doc.includes(name), `docs/conformance.md does not name "${name}"`);
    for (const name of Object.keys(KNOWN_DIFFERENCES)) assert.ok(CASES.some((c) => c.name === name), `known difference "${name}" names no case`);
  });

  CASES.forEach((c, i) => {
    it(c.name, async () => {
      const prefix = `c${i}-${Date.now().toString(36)}`;
      const fromReal = await c.run(targets.real, prefix);
      const fromSim = await c.run(targets.sim, prefix);
      const known = KNOWN_DIFFERENCES[c.name];
      if (known) {
        // A known difference must still be one: if the simulator now agrees, the entry goes.
        assert.notDeepEqual(fromSim, fromReal, `"${c.name}" now agrees; remove it from known differences and docs/conformance.md`);
        assert.deepEqual(known.normalise(fromSim), known.normalise(fromReal), `"${c.name}" differs beyond its known difference`);
        return;
      }
      assert.deepEqual(fromSim, fromReal);
    });
  });
});
