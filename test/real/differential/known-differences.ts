/**
 * Differences between kube-controller-manager's and fleet-attach's records that are listed
 * deviations. Each entry names its scenario (the key), the row of docs/deviations.md that
 * explains it, and a normalisation that removes exactly that difference from both records; what
 * is left must be equal. `check` asserts the difference itself is the documented one.
 *
 * A row is found by its rule code (first column) and either the tag `differential:<scenario>`
 * (rows added for a difference these tests found) or `phrase`, a sentence of the row's
 * fleet-attach column (rows written before these tests, which stay as they are).
 */
import assert from 'node:assert/strict';
import type { ScenarioRecord } from './driver.js';

export interface KnownDifference {
  /** The rule code(s) in the first column of the docs/deviations.md row, as written there. */
  rule: string;
  /** Words of that row, when it carries no `differential:<scenario>` tag. */
  phrase?: string;
  normalise(r: ScenarioRecord): ScenarioRecord;
  /** Throws unless the two records differ as documented. */
  check?(fa: ScenarioRecord, kcm: ScenarioRecord): void;
}

const withoutCheckpoints = (r: ScenarioRecord): ScenarioRecord => ({ ...r, checkpoints: [] });

export const KNOWN_DIFFERENCES: Record<string, KnownDifference> = {
  // Upstream adds the pod only on its next event (or the 3-minute pod list, C10); fleet-attach
  // on the PV's add event. The outcome is the same; the checkpoint 3 s after the PV shows when.
  'pv-created-late': {
    rule: 'C8',
    phrase: 'A PV add or update re-processes the pods of the claim bound to it',
    normalise: withoutCheckpoints,
    check(fa, kcm) {
      assert.match(kcm.checkpoints[0], /attachments \[\]/, 'upstream attached before any pod event');
      assert.match(fa.checkpoints[0], /attachments \[pv20@n1 attached\]/, 'fleet-attach did not attach on the PV event');
    },
  },
  // Upstream's pod delete cannot resolve the volume once the PVC is gone; its 1-minute populator
  // pass removes the pod later. fleet-attach undoes the pod's pairs at once.
  'claim-deleted-before-pod': {
    rule: 'C3',
    phrase: "A pod's removal undoes exactly the pairs its addition made",
    normalise: withoutCheckpoints,
    check(fa, kcm) {
      assert.match(kcm.checkpoints[0], /attachments \[pv21@n1 attached\]/, 'upstream detached before its populator pass');
      assert.match(fa.checkpoints[0], /attachments \[\]/, 'fleet-attach did not detach at once');
    },
  },
  // Upstream ignores the Uncertain attachment on n1 and attaches the ReadWriteOnce volume to n2
  // while n1's VolumeAttachment is still attached (two nodes at once); fleet-attach holds n2
  // with a Multi-Attach event until n1 is detached. The end state is the same.
  'rwo-uncertain-elsewhere': {
    rule: 'G3, D7',
    phrase: 'An Uncertain entry on another node holds the attach too',
    normalise: (r) => ({ ...withoutCheckpoints(r), events: r.events.filter((e) => !/ Warning FailedAttachVolume .*Waiting for detach/.test(e)) }),
    check(fa, kcm) {
      assert.match(kcm.checkpoints[0], /attachments \[pv19@n1 attached; pv19@n2 attached\]/, 'upstream did not attach to n2 beside the Uncertain n1');
      assert.match(fa.checkpoints[0], /attachments \[pv19@n1 attached\]/, 'fleet-attach attached to n2 beside the Uncertain n1');
      assert.ok(fa.events.some((e) => e.startsWith('Pod default/p19 Warning FailedAttachVolume') && e.includes('Waiting for detach for volume "pv19" Volume is already exclusively attached to one node')), 'fleet-attach held p19 without a Multi-Attach event');
    },
  },
};
