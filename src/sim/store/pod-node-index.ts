/**
 * Pods by spec.nodeName: the index behind `fieldSelector=spec.nodeName=X`, the query kubelets
 * and the attach/detach controller's per-node lookups make. Holds store keys only.
 */
export class PodNodeIndex {
  private readonly byNode = new Map<string, Set<string>>();

  /** Moves `key` from `oldNode` to `newNode` (either undefined for unbound or removed). */
  move(key: string, oldNode: string | undefined, newNode: string | undefined): void {
    if (oldNode === newNode) return;
    if (oldNode !== undefined) {
      const s = this.byNode.get(oldNode);
      s?.delete(key);
      if (s && s.size === 0) this.byNode.delete(oldNode);
    }
    if (newNode !== undefined) {
      let s = this.byNode.get(newNode);
      if (!s) this.byNode.set(newNode, (s = new Set()));
      s.add(key);
    }
  }

  /** Keys of the pods bound to `node`, sorted. */
  keysOn(node: string): string[] {
    return [...(this.byNode.get(node) ?? [])].sort();
  }
}
