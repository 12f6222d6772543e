/**
 * The texts of the controller's events (rules J1, J2, H3, H6), byte for byte as upstream builds
 * them with `GenerateMsg`: `<prefix> for volume "<spec name>" <suffix>`, the spec name quoted as
 * Go's `%q` does. Note the trailing space of the success text (empty suffix).
 */

export const REASON_SUCCESSFUL_ATTACH = 'SuccessfulAttachVolume';
export const REASON_FAILED_ATTACH = 'FailedAttachVolume';
export const EVENT_COMPONENT = 'attachdetach-controller';

/** Go's `%q` for the strings that occur in volume names (ASCII escapes; printable Unicode kept). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c === 0x07) out += '\\a';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else if (c === 0x0b) out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + '"';
}

/** Upstream `GenerateMsg(prefix, suffix)`. */
export function volumeMessage(prefix: string, specName: string, suffix: string): string {
  return `${prefix} for volume ${goQuote(specName)} ${suffix}`;
}

/** J1: `AttachVolume.Attach succeeded for volume "<spec>" ` (trailing space). */
export function attachSucceededMessage(specName: string): string {
  return volumeMessage('AttachVolume.Attach succeeded', specName, '');
}

/** J2: `AttachVolume.Attach failed for volume "<spec>" : <err>`. */
export function attachFailedMessage(specName: string, error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return volumeMessage('AttachVolume.Attach failed', specName, `: ${text}`);
}

/** A pod using the volume on another node, as the DSW knows it. */
export interface PodName {
  readonly namespace: string;
  readonly name: string;
}

export interface MultiAttachMessageInput {
  readonly specName: string;
  /** Namespace of the pod receiving the event. */
  readonly recipientNamespace: string;
  /** DSW pods referencing the volume on the nodes where it is attached (other than the recipient's node). */
  readonly podsOnOtherNodes: readonly PodName[];
  /**
   * true: the texts of upstream PR #138837 (H6, `Waiting for detach` prefix), emitted by current
   * releases (1.33–1.36 patch releases and later); false: the older `Multi-Attach error` texts (H3).
   * Default {@link DEFAULT_WAITING_FOR_DETACH_TEXT}.
   */
  readonly waitingForDetachText?: boolean;
}

/** Default for {@link MultiAttachMessageInput.waitingForDetachText}: the current upstream texts (H6). */
export const DEFAULT_WAITING_FOR_DETACH_TEXT = true;

/**
 * H3/H6: the message for one recipient. Pods in the recipient's namespace are named (joined by
 * ", "); pods in other namespaces are only counted, never named.
 */
export function multiAttachMessage(input: MultiAttachMessageInput): string {
  const newer = input.waitingForDetachText ?? DEFAULT_WAITING_FOR_DETACH_TEXT;
  const prefix = newer ? 'Waiting for detach' : 'Multi-Attach error';
  if (input.podsOnOtherNodes.length === 0) {
    const suffix = newer
      ? 'Volume is already exclusively attached to one node, waiting on detach before it can be attached to another node'
      : "Volume is already exclusively attached to one node and can't be attached to another";
    return volumeMessage(prefix, input.specName, suffix);
  }
  const local: string[] = [];
  let others = 0;
  for (const pod of input.podsOnOtherNodes) {
    if (pod.namespace === input.recipientNamespace) local.push(pod.name);
    else others++;
  }
  let suffix: string;
  if (local.length > 0) {
    suffix = `Volume is already used by pod(s) ${local.join(', ')}`;
    if (others > 0) suffix += ` and ${others} pod(s) in different namespaces`;
  } else {
    suffix = `Volume is already used by ${others} pod(s) in different namespaces`;
  }
  return volumeMessage(prefix, input.specName, suffix);
}
