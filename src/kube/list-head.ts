/**
 * The continue token of a list page read from the start of its body, before the rest arrives,
 * so that the next page can be requested while this one is still being received and parsed.
 *
 * kube-apiserver (Go struct order: kind, apiVersion, metadata, items) and the simulator both
 * write `metadata` before `items`. Only the text before the first `"items"` key is searched, and
 * the result is a hint: the list always checks it against the token of the parsed page and
 * discards a prefetched page that does not match, so an unusual layout costs the overlap,
 * never correctness.
 */

export type HeadScan = { done: false } | { done: true; token: string | undefined };

const CONTINUE = /"continue"\s*:\s*"((?:[^"\\]|\\.)*)"/;

/**
 * `done: false` while the head ends before `"items"` (more body needed); then the token, or
 * undefined when the metadata has none (the last page) or it cannot be read.
 */
export function continueInHead(head: string): HeadScan {
  const itemsAt = head.indexOf('"items"');
  if (itemsAt < 0) return { done: false };
  const m = CONTINUE.exec(head.slice(0, itemsAt));
  if (!m || m[1] === '') return { done: true, token: undefined };
  try {
    const token: unknown = JSON.parse(`"${m[1]}"`);
    return { done: true, token: typeof token === 'string' && token !== '' ? token : undefined };
  } catch {
    return { done: true, token: undefined };
  }
}
