/**
 * JSON Patch (RFC 6902) bodies for the compare-and-swap writes of KubeApiClient: the Node's
 * `status.volumesAttached` list and a PersistentVolume's lock annotation.
 *
 * kube-apiserver applies a JSON Patch to the object as currently stored, inside its update loop,
 * with evanphx/json-patch v4 (apiserver `handlers/patch.go`); any operation that fails, a `test`
 * included, fails the whole patch with 422 and nothing is written. So `[test, replace]` is a
 * field-level compare-and-swap that, unlike a resourceVersion precondition, is not upset by
 * writes to other fields (kubelet's heartbeats on the same Node).
 *
 * `test` compares JSON values: objects by their members (order free), arrays element by element
 * in order, scalars by their compact text. The expected value must therefore be what the server
 * encodes: every member it writes, none it omits.
 */
import { isConflict, isInvalid, isNotFound } from './kube-errors.js';
import type { AttachedVolume } from './projections/node.js';

export type JsonPatchOp =
  | { readonly op: 'test' | 'add' | 'replace'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string };

/**
 * The patch as sent. `test` compares strings by their encoded text, and kube-apiserver encodes
 * the stored object with Go's encoding/json, which escapes `<`, `>`, `&`, U+2028 and U+2029 as
 * `\u003c`… where JSON.stringify writes them as they are; so the body is escaped the same way,
 * or a value holding one of them would never test equal. (Outside strings JSON has none of them.)
 */
export function jsonPatchBody(ops: readonly JsonPatchOp[]): string {
  return JSON.stringify(ops).replace(GO_ESCAPED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const GO_ESCAPED = /[<>&\u2028\u2029]/g;

/** One JSON Pointer (RFC 6901) reference token: `~` → `~0`, `/` → `~1` (an annotation key such as `fleet-attach.io/attach-lock`). */
export function pointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

const VOLUMES_ATTACHED = '/status/volumesAttached';

/**
 * The `status.volumesAttached` entries as kube-apiserver encodes them: `name` and `devicePath`,
 * the latter always present (its JSON tag has no omitempty), in list order.
 */
export function volumesAttachedValue(list: ReadonlyArray<Readonly<AttachedVolume>>): AttachedVolume[] {
  return list.map((v) => ({ name: v.name, devicePath: v.devicePath }));
}

/**
 * The compare-and-swap of `status.volumesAttached` from `expected` (as last read or written) to
 * `next`; an empty or null list is the absent field (the server never encodes an empty list:
 * it is omitempty).
 *
 * An absent field is tested with `value: null`. evanphx/json-patch's `test` (the v4 line
 * kube-apiserver imports, and v5 alike) passes for a null value when the member is missing from
 * an object that exists, and fails when the member is there (its own test table: `{"baz":"qux"}`
 * tests `/foo` equal to null); it fails when the parent object itself is missing, but `/status`
 * always exists in a Node as the server encodes it (NodeStatus is a struct, never omitted).
 * That keeps the absent case a field-level CAS too.
 *
 * With `resourceVersion` (the Node's, as read with `expected`), a `test` of
 * `/metadata/resourceVersion` comes first: a test of the list alone passes again once the list
 * has gone away and come back (A→B→A), so a write delayed past other writers' changes could land
 * on a list equal to what it read but no longer meaning the same (a volume detached and attached
 * again). The version makes it fail on any write to the Node since the read, kubelet's included
 * (a re-read and a retry, as upstream guards its removals from the list).
 *
 * `next` empty: `remove` when the list was there, nothing after the `test` when it was not
 * (the patch then only confirms the list is still absent).
 */
export function volumesAttachedCas(
  expected: ReadonlyArray<Readonly<AttachedVolume>> | null,
  next: ReadonlyArray<Readonly<AttachedVolume>> | null,
  resourceVersion?: string,
): JsonPatchOp[] {
  const wasThere = expected !== null && expected.length > 0;
  const willBe = next !== null && next.length > 0;
  const ops: JsonPatchOp[] = resourceVersion === undefined ? [] : [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }];
  ops.push({ op: 'test', path: VOLUMES_ATTACHED, value: wasThere ? volumesAttachedValue(expected) : null });
  if (willBe) ops.push({ op: wasThere ? 'replace' : 'add', path: VOLUMES_ATTACHED, value: volumesAttachedValue(next) });
  else if (wasThere) ops.push({ op: 'remove', path: VOLUMES_ATTACHED });
  return ops;
}

/**
 * A compare-and-swap write's outcome: a failed `test` (422) or a conflict (409) is `conflict`,
 * an answer rather than an error; 404 is `not-found`; anything else rejects.
 */
export async function casOutcome(sent: Promise<unknown>): Promise<'patched' | 'not-found' | 'conflict'> {
  try {
    await sent;
    return 'patched';
  } catch (err) {
    if (isNotFound(err)) return 'not-found';
    // A JSON Patch's only 422 is an operation that does not apply: the patched object is valid
    // by construction (a list of name/devicePath pairs, an annotation, a label).
    if (isInvalid(err) || isConflict(err)) return 'conflict';
    throw err;
  }
}
