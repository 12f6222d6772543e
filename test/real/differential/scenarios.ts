/**
 * The differential scenarios. Each runs once with kube-controller-manager and once with
 * fleet-attach, each on a fresh control plane, driven step by step by the Driver; the two
 * records must agree (or differ only as listed in ./known-differences.ts).
 *
 * Steps are chosen to converge in seconds under upstream's timers (docs/upstream-rules.md §2):
 * pod deletes and updates and PVC updates are handled at once (C3, C8); nothing waits for the
 * populator's 1-minute pass (C9) or its 3-minute pod list (C10). A step that depends on the
 * order of two watch streams (a pod event against a node event) waits for the driver's own
 * watch and then pauses briefly; the record does not depend on which arrives first.
 */
import type { ControllerArgs } from './controllers.js';
import { OUT_OF_SERVICE, type Driver } from './driver.js';

export interface Scenario {
  /** Key: test name, and `differential:<name>` in docs/deviations.md for a listed difference. */
  name: string;
  /** What it checks, with the upstream rules involved. */
  title: string;
  /** Needs upstream's fixed 6-minute force-detach timer: runs only with FA_SLOW_TESTS=1. */
  slow?: boolean;
  /** The CSIDriver's spec.attachRequired (default true; it is immutable, so it is set at creation). */
  attachRequired?: boolean;
  /** Parity knobs for both controllers. */
  args?: ControllerArgs;
  /** Before the controller starts (the CSIDriver already exists). */
  setup?(d: Driver): Promise<void>;
  /** After the controller started. Ends with its end condition met; the runner then waits for quiet. */
  run(d: Driver): Promise<void>;
}

const FORCE_DETACH_WAIT = 9 * 60_000;

export const SCENARIOS: Scenario[] = [
  {
    name: 'attach',
    title: 'a pod with a bound CSI claim on a managed node: one VolumeAttachment, node status, SuccessfulAttachVolume (G4, J1, K1, L2)',
    async setup(d) {
      await d.node('n1');
      await d.volume('pv1');
    },
    async run(d) {
      await d.pod('p1', { node: 'n1', claims: ['pv1'] });
      await d.waitAttached('pv1', ['n1'], ['p1']);
      await d.waitListed('n1', ['pv1']);
    },
  },
  {
    name: 'claim-deleted-before-pod',
    // About a minute with upstream (its populator pass): listed early, so that it overlaps the others.
    title: 'the PVC is deleted, then its pod: upstream cannot resolve the volume on the pod delete and detaches at its next 1-minute populator pass; fleet-attach at once (C3, C9)',
    async setup(d) {
      await d.node('n1');
      await d.volume('pv21');
    },
    async run(d) {
      const t0 = Date.now();
      await d.pod('p21', { node: 'n1', claims: ['pv21'] });
      await d.waitAttached('pv21', ['n1'], ['p21']);
      await d.waitListed('n1', ['pv21']);
      await d.deleteClaim('pv21');
      await d.waitFor('claim pv21 gone', () => !d.claimExists('pv21'));
      // Upstream's populator ticks when the controller is ready and then every minute: the pod
      // is deleted about 20 s after the first tick, so that no tick falls in the 5 s checked.
      await d.pause(Math.max(1000, 20_000 - (Date.now() - t0)));
      await d.deletePod('p21');
      await d.pause(5000);
      d.checkpoint('5 s after the pod was deleted');
      await d.waitGone('pv21', 'n1', 120_000);
      await d.waitListed('n1', []);
    },
  },
  {
    name: 'detach-after-pod-deleted',
    title: 'the pod goes while the volume is mounted, then the kubelet unmounts: status first, then the delete (C3, D3, F6, F7, F8)',
    async setup(d) {
      await d.node('n1');
      await d.volume('pv2');
    },
    async run(d) {
      await d.pod('p2', { node: 'n1', claims: ['pv2'] });
      await d.waitAttached('pv2', ['n1'], ['p2']);
      await d.waitListed('n1', ['pv2']);
      await d.mount('n1', ['pv2']);
      await d.deletePod('p2');
      await d.mount('n1', []);
      await d.waitGone('pv2', 'n1');
      await d.waitListed('n1', []);
    },
  },
  {
    name: 'rwo-move',
    title: 'a ReadWriteOnce volume moves from n1 to n2: detached from n1, then attached to n2 (F7, G4, H2)',
    async setup(d) {
      await d.node('n1');
      await d.node('n2');
      await d.volume('pv3');
    },
    async run(d) {
      await d.pod('p3a', { node: 'n1', claims: ['pv3'] });
      await d.waitAttached('pv3', ['n1'], ['p3a']);
      await d.waitListed('n1', ['pv3']);
      await d.mount('n1', ['pv3']);
      await d.deletePod('p3a');
      await d.mount('n1', []);
      await d.waitGone('pv3', 'n1');
      await d.waitListed('n1', []);
      await d.pod('p3b', { node: 'n2', claims: ['pv3'] });
      await d.waitAttached('pv3', ['n2'], ['p3b']);
      await d.waitListed('n2', ['pv3']);
    },
  },
  {
    name: 'multi-attach',
    title: 'a ReadWriteOnce volume mounted on n1 is wanted on n2: one Multi-Attach event per entry (a pod joining later gets none), then the move (G3, H1, H3-H6)',
    async setup(d) {
      await d.node('n1');
      await d.node('n2');
      await d.volume('pv4');
    },
    async run(d) {
      await d.pod('p4a', { node: 'n1', claims: ['pv4'] });
      await d.waitAttached('pv4', ['n1'], ['p4a']);
      await d.waitListed('n1', ['pv4']);
      await d.mount('n1', ['pv4']);
      await d.pod('p4b', { node: 'n2', claims: ['pv4'] });
      await d.waitFor('FailedAttachVolume (multi-attach) for p4b', () => d.eventSeen('FailedAttachVolume', 'p4b'));
      // Joins the (pv4, n2) entry whose event was already reported (H4): no event of its own.
      await d.pod('p4c', { node: 'n2', claims: ['pv4'] });
      await d.pause(1500);
      await d.deletePod('p4a');
      await d.mount('n1', []);
      await d.waitGone('pv4', 'n1');
      await d.waitAttached('pv4', ['n2'], ['p4b', 'p4c']);
      await d.waitListed('n2', ['pv4']);
      await d.waitListed('n1', []);
    },
  },
  {
    name: 'rwx-several-nodes',
    title: 'a ReadWriteMany volume on three nodes at once, then one pod goes (H1, H2, I1)',
    async setup(d) {
      for (const n of ['n1', 'n2', 'n3']) await d.node(n);
      await d.volume('pv5', { accessModes: ['ReadWriteMany'] });
    },
    async run(d) {
      await d.pod('p5a', { node: 'n1', claims: ['pv5'] });
      await d.pod('p5b', { node: 'n2', claims: ['pv5'] });
      await d.pod('p5c', { node: 'n3', claims: ['pv5'] });
      await d.waitAttached('pv5', ['n1', 'n2', 'n3'], ['p5a', 'p5b', 'p5c']);
      for (const n of ['n1', 'n2', 'n3']) await d.waitListed(n, ['pv5']);
      await d.deletePod('p5b');
      await d.waitGone('pv5', 'n2');
      await d.waitListed('n2', []);
    },
  },
  {
    name: 'node-deleted',
    title: 'the Node object goes (volume not mounted); its pod is then deleted as the pod GC would: the volume is detached without a live check (B2, D4, F7, F9, K4)',
    async setup(d) {
      await d.node('n1');
      await d.node('n2');
      await d.volume('pv6');
    },
    async run(d) {
      await d.pod('p6', { node: 'n1', claims: ['pv6'] });
      await d.waitAttached('pv6', ['n1'], ['p6']);
      await d.waitListed('n1', ['pv6']);
      await d.deleteNode('n1');
      await d.waitFor('node n1 gone', () => !d.nodeExists('n1'));
      await d.pause(1000);
      // Still desired while the pod exists (F1): nothing may be detached yet.
      if (!d.vaAttached('pv6', 'n1')) throw new Error('pv6 was detached from the deleted node while its pod still wanted it');
      await d.deletePod('p6');
      await d.waitGone('pv6', 'n1');
    },
  },
  {
    name: 'out-of-service',
    title: 'a node shuts down with the volume mounted, gets the out-of-service taint, its pod is force-deleted: detached at once, no 6-minute wait (F5, F6, F11)',
    async setup(d) {
      await d.node('n1');
      await d.volume('pv7');
    },
    async run(d) {
      await d.pod('p7', { node: 'n1', claims: ['pv7'] });
      await d.waitAttached('pv7', ['n1'], ['p7']);
      await d.waitListed('n1', ['pv7']);
      await d.mount('n1', ['pv7']);
      await d.setReady('n1', false);
      await d.taint('n1', OUT_OF_SERVICE, 'NoExecute', 'nodeshutdown');
      await d.deletePod('p7');
      // Far below the 6-minute timer: only the taint can detach it in time.
      await d.waitGone('pv7', 'n1', 60_000);
      await d.waitListed('n1', []);
    },
  },
  {
    name: 'attach-error-retry',
    title: 'the external attacher first sets status.attachError, then attaches: FailedAttachVolume with its message, a retry reusing the VolumeAttachment, then success (J2, L3, I3)',
    async setup(d) {
      await d.node('n1');
      await d.volume('pv8');
      d.setAttachPolicy('pv8', { error: 'rpc error: code = Internal desc = simulated attach failure' });
    },
    async run(d) {
      await d.pod('p8', { node: 'n1', claims: ['pv8'] });
      await d.waitFor('FailedAttachVolume for p8', () => d.eventSeen('FailedAttachVolume', 'p8', 'simulated attach failure'));
      d.setAttachPolicy('pv8', 'attach');
      await d.waitAttached('pv8', ['n1'], ['p8']);
      await d.waitListed('n1', ['pv8']);
    },
  },
  {
    name: 'va-deleted-by-other',
    title: 'someone else deletes an attached VolumeAttachment: the periodic check (5 s here, both controllers) finds it gone, drops it from node status, and the volume is attached again (L6, M1, M2)',
    args: { reconcileSyncPeriod: '5s' },
    async setup(d) {
      await d.node('n1');
      await d.volume('pv9');
    },
    async run(d) {
      await d.pod('p9', { node: 'n1', claims: ['pv9'] });
      await d.waitAttached('pv9', ['n1'], ['p9']);
      await d.waitListed('n1', ['pv9']);
      await d.deleteAttachment('pv9', 'n1');
      await d.waitGone('pv9', 'n1');
      await d.waitFor('pv9@n1 attached again', () => d.vaAttached('pv9', 'n1'), 90_000);
      await d.waitListed('n1', ['pv9']);
    },
  },
  {
    name: 'startup-existing',
    title: 'start-up with VolumeAttachments and volumesAttached left by a previous controller: listed+desired kept, VA-only undesired detached, listed-only undesired dropped, VA-only desired re-confirmed, new one attached (A2-A5, D2, G2, Q5)',
    async setup(d) {
      for (const pv of ['pv10a', 'pv10b', 'pv10c', 'pv10d', 'pv10e']) await d.volume(pv);
      await d.node('n1', { volumesAttached: ['pv10a', 'pv10c'] });
      await d.createAttachment('pv10a', 'n1', { attached: true });
      await d.createAttachment('pv10b', 'n1', { attached: true });
      await d.createAttachment('pv10e', 'n1', { attached: true });
      await d.pod('p10a', { node: 'n1', claims: ['pv10a'] });
      await d.pod('p10d', { node: 'n1', claims: ['pv10d'] });
      await d.pod('p10e', { node: 'n1', claims: ['pv10e'] });
    },
    async run(d) {
      await d.waitGone('pv10b', 'n1');
      await d.waitAttached('pv10d', ['n1'], ['p10d']);
      await d.waitFor('SuccessfulAttachVolume for p10e', () => d.eventSeen('SuccessfulAttachVolume', 'p10e'));
      await d.waitListed('n1', ['pv10a', 'pv10d', 'pv10e']);
    },
  },
  {
    name: 'claim-bound-late',
    title: 'the pod comes first with a pending claim; the PV, then the claim are bound later: the PVC update attaches it (C4, C8)',
    async setup(d) {
      await d.node('n1');
      await d.volume('pv11', { bound: false });
    },
    async run(d) {
      await d.pod('p11', { node: 'n1', claims: ['pv11'] });
      await d.pause(1500);
      if (d.vaExists('pv11', 'n1')) throw new Error('an unbound claim was attached');
      await d.bindLate('pv11');
      await d.waitAttached('pv11', ['n1'], ['p11']);
      await d.waitListed('n1', ['pv11']);
    },
  },
  {
    name: 'pod-succeeded',
    title: 'a pod that finished (phase Succeeded) no longer wants its volume: detached at once (C2, C3, F7)',
    async setup(d) {
      await d.node('n1');
      await d.volume('pv12');
    },
    async run(d) {
      await d.pod('p12', { node: 'n1', claims: ['pv12'] });
      await d.waitAttached('pv12', ['n1'], ['p12']);
      await d.waitListed('n1', ['pv12']);
      await d.podPhase('p12', 'Succeeded');
      await d.waitGone('pv12', 'n1');
      await d.waitListed('n1', []);
    },
  },
  {
    name: 'pod-terminating',
    title: 'a pod being deleted keeps its volume while a container runs, and releases it once all have terminated, before the Pod object is gone (C2)',
    async setup(d) {
      await d.node('n1');
      await d.volume('pv13');
    },
    async run(d) {
      await d.pod('p13', { node: 'n1', claims: ['pv13'] });
      await d.waitAttached('pv13', ['n1'], ['p13']);
      await d.waitListed('n1', ['pv13']);
      await d.containerState('p13', 'running');
      await d.deletePodGracefully('p13');
      await d.pause(1500);
      if (!d.vaAttached('pv13', 'n1')) throw new Error('pv13 was detached while a container of its terminating pod still ran');
      await d.containerState('p13', 'terminated');
      await d.waitGone('pv13', 'n1');
      await d.waitListed('n1', []);
    },
  },
  {
    name: 'attach-not-required',
    title: 'a CSIDriver with attachRequired false: nothing is attached, nothing is reported (C7)',
    attachRequired: false,
    async setup(d) {
      await d.node('n1');
      await d.volume('pv14');
    },
    async run(d) {
      await d.pod('p14', { node: 'n1', claims: ['pv14'] });
      await d.pause(3000);
    },
  },
  {
    name: 'multi-attach-no-pods',
    title: 'the volume stays attached on n1 (mounted) after its pod went; a pod on n2 gets the text for no pods (H3, H6)',
    async setup(d) {
      await d.node('n1');
      await d.node('n2');
      await d.volume('pv17');
    },
    async run(d) {
      await d.pod('p17a', { node: 'n1', claims: ['pv17'] });
      await d.waitAttached('pv17', ['n1'], ['p17a']);
      await d.waitListed('n1', ['pv17']);
      await d.mount('n1', ['pv17']);
      // Both on the one pod watch, in this order: p17a has left the desired state when p17b comes.
      await d.deletePod('p17a');
      await d.pod('p17b', { node: 'n2', claims: ['pv17'] });
      await d.waitFor('FailedAttachVolume (multi-attach) for p17b', () => d.eventSeen('FailedAttachVolume', 'p17b'));
      await d.mount('n1', []);
      await d.waitGone('pv17', 'n1');
      await d.waitAttached('pv17', ['n2'], ['p17b']);
      await d.waitListed('n2', ['pv17']);
    },
  },
  {
    name: 'multi-attach-namespaces',
    title: 'one volume (one handle) claimed through PVs in three namespaces: each blocked pod is told the names of the pods in its own namespace and the count of the others; the entry keeps the spec (PV name) of its first pod (H3, H6, §1 spec name)',
    async setup(d) {
      await d.namespace('other');
      await d.namespace('third');
      for (const n of ['n1', 'n2', 'n3']) await d.node(n);
      await d.volume('pv18');
      await d.volume('pv18.other', { ns: 'other' });
      await d.volume('pv18.third', { ns: 'third' });
    },
    async run(d) {
      await d.pod('p18a', { ns: 'other', node: 'n1', claims: ['pv18.other'] });
      await d.waitAttached('pv18', ['n1'], ['p18a'], 'other');
      await d.waitListed('n1', ['pv18']);
      // Joins the attached (U, n1) entry: no attach, no event.
      await d.pod('p18b', { node: 'n1', claims: ['pv18'] });
      await d.mount('n1', ['pv18']);
      await d.pod('p18c', { node: 'n2', claims: ['pv18'] });
      await d.waitFor('FailedAttachVolume (multi-attach) for p18c', () => d.eventSeen('FailedAttachVolume', 'p18c'));
      await d.pod('p18e', { ns: 'third', node: 'n3', claims: ['pv18.third'] });
      await d.waitFor('FailedAttachVolume (multi-attach) for third/p18e', () => d.eventSeen('FailedAttachVolume', 'p18e', '', 'third'));
      // Joins the blocked (U, n2) entry whose event was already reported (H4).
      await d.pod('p18d', { ns: 'other', node: 'n2', claims: ['pv18.other'] });
      // n3 gives up first, so that n2 is the only candidate once n1 lets go (E2).
      await d.deletePod('p18e', 'third');
      await d.pause(1000);
      await d.deletePod('p18a', 'other');
      await d.deletePod('p18b');
      await d.mount('n1', []);
      await d.waitGone('pv18', 'n1');
      await d.waitAttached('pv18', ['n2'], ['p18c']);
      await d.waitFor('SuccessfulAttachVolume for other/p18d', () => d.eventSeen('SuccessfulAttachVolume', 'p18d', '', 'other'));
      await d.waitListed('n2', ['pv18']);
    },
  },
  {
    name: 'rwo-uncertain-elsewhere',
    title: 'start-up with a ReadWriteOnce volume\'s VolumeAttachment on n1 (Uncertain there, A3) that n1 still reports in use but no pod wants; a pod on n2 wants it; then n1 unmounts (G3, D7, F6, A3)',
    async setup(d) {
      await d.node('n1');
      await d.node('n2');
      await d.volume('pv19');
      // A previous controller created the VolumeAttachment but never wrote node status; the
      // kubelet reports the volume in use.
      await d.createAttachment('pv19', 'n1', { attached: true });
      await d.mount('n1', ['pv19']);
    },
    async run(d) {
      await d.pod('p19', { node: 'n2', claims: ['pv19'] });
      await d.waitFor('pv19 attached to n2, or an event for p19', () => d.vaAttached('pv19', 'n2') || d.eventSeen('FailedAttachVolume', 'p19'));
      await d.pause(1500);
      d.checkpoint('while n1 reports pv19 in use');
      await d.mount('n1', []);
      await d.waitGone('pv19', 'n1');
      await d.waitAttached('pv19', ['n2'], ['p19']);
      await d.waitListed('n2', ['pv19']);
    },
  },
  {
    name: 'pv-created-late',
    title: 'pod and bound claim first, the PV created later: upstream waits for a pod event (or its 3-minute pod list), fleet-attach attaches on the PV event (C4, C8, C10)',
    async setup(d) {
      await d.node('n1');
      await d.volume('pv20', { bound: 'pv-later' });
    },
    async run(d) {
      await d.pod('p20', { node: 'n1', claims: ['pv20'] });
      await d.pause(1000);
      await d.createLatePv('pv20');
      await d.pause(5000);
      d.checkpoint('5 s after the PV was created');
      await d.touchPod('p20');
      await d.waitAttached('pv20', ['n1'], ['p20']);
      await d.waitListed('n1', ['pv20']);
    },
  },
  {
    name: 'node-managed-late',
    title: 'a pod on an unmanaged node; the node gets the annotation later: a Node event never rescans its pods, the next pod event does (B1, B3)',
    async setup(d) {
      await d.node('n1', { managed: false });
      await d.volume('pv22');
    },
    async run(d) {
      await d.pod('p22', { node: 'n1', claims: ['pv22'] });
      await d.pause(1000);
      await d.annotateNode('n1');
      await d.pause(2000);
      d.checkpoint('2 s after the annotation');
      await d.touchPod('p22');
      await d.waitAttached('pv22', ['n1'], ['p22']);
      await d.waitListed('n1', ['pv22']);
    },
  },
  // ------------------------------------------------------------------ slow tier (FA_SLOW_TESTS=1)
  {
    name: 'unhealthy-node-timeout',
    title: 'a node goes NotReady with the volume mounted and its pod is deleted: detached only after the 6-minute max wait for unmount (D5, F4-F6, F11)',
    slow: true,
    async setup(d) {
      await d.node('n1');
      await d.volume('pv15');
    },
    async run(d) {
      await d.pod('p15', { node: 'n1', claims: ['pv15'] });
      await d.waitAttached('pv15', ['n1'], ['p15']);
      await d.waitListed('n1', ['pv15']);
      await d.mount('n1', ['pv15']);
      await d.setReady('n1', false);
      await d.deletePod('p15');
      await d.pause(30_000);
      if (!d.vaAttached('pv15', 'n1')) throw new Error('pv15 was detached from the unhealthy node before the max wait');
      await d.waitGone('pv15', 'n1', FORCE_DETACH_WAIT);
      await d.waitListed('n1', []);
    },
  },
  {
    name: 'node-deleted-mounted',
    title: 'the Node object goes with the volume mounted, then its pod: still mounted by the deleted node\'s last volumesInUse, detached after the 6-minute max wait (D4, F6)',
    slow: true,
    async setup(d) {
      await d.node('n1');
      await d.volume('pv16');
    },
    async run(d) {
      await d.pod('p16', { node: 'n1', claims: ['pv16'] });
      await d.waitAttached('pv16', ['n1'], ['p16']);
      await d.waitListed('n1', ['pv16']);
      await d.mount('n1', ['pv16']);
      await d.pause(1000);
      await d.deleteNode('n1');
      await d.pause(1000);
      await d.deletePod('p16');
      await d.pause(30_000);
      if (!d.vaAttached('pv16', 'n1')) throw new Error('pv16 was detached from the deleted node before the max wait');
      await d.waitGone('pv16', 'n1', FORCE_DETACH_WAIT);
    },
  },
];
