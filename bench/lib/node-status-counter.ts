/**
 * Counts `status.volumesAttached` entries over all Nodes as the API server holds them, from a
 * list and then a watch: the cluster-side half of "converged" (the controller's own summary
 * marks a volume reported before its node's PATCH has landed).
 *
 * Cheap on purpose, since it runs next to the processes being measured: a node line is not
 * parsed; its entries are counted by the `"devicePath"` keys (only volumesAttached entries
 * carry one) and its name read from the leading metadata, with JSON.parse as the fallback.
 */
import type { RawKube, RawWatch } from './raw-kube.js';

const NAME = /"metadata":\{"name":"([^"]+)"/;
const KEY = '"devicePath"';

function countKeys(line: string): number {
  let n = 0;
  for (let i = line.indexOf(KEY); i >= 0; i = line.indexOf(KEY, i + KEY.length)) n++;
  return n;
}

export class NodeStatusCounter {
  private readonly perNode = new Map<string, number>();
  private sum = 0;
  private watch: RawWatch | undefined;
  events = 0;

  constructor(private readonly kube: RawKube) {}

  async start(): Promise<void> {
    const rv = await this.kube.listAll('/api/v1/nodes', (o) => {
      const n = o as { metadata: { name: string }; status?: { volumesAttached?: unknown[] } };
      this.set(n.metadata.name, n.status?.volumesAttached?.length ?? 0);
    });
    this.watch = this.kube.watch('/api/v1/nodes', rv, (line) => this.onLine(line));
    await this.watch.started;
  }

  /** Entries of status.volumesAttached summed over all Nodes. */
  total(): number {
    return this.sum;
  }

  stop(): void {
    this.watch?.close();
  }

  private onLine(line: string): void {
    this.events++;
    if (line.startsWith('{"type":"BOOKMARK"')) return;
    let name = NAME.exec(line)?.[1];
    let count: number;
    if (name !== undefined) {
      count = countKeys(line);
    } else {
      const o = (JSON.parse(line) as { object: { metadata: { name: string }; status?: { volumesAttached?: unknown[] } } }).object;
      name = o.metadata.name;
      count = o.status?.volumesAttached?.length ?? 0;
    }
    this.set(name, line.startsWith('{"type":"DELETED"') ? 0 : count);
  }

  private set(name: string, count: number): void {
    this.sum += count - (this.perNode.get(name) ?? 0);
    if (count === 0) this.perNode.delete(name);
    else this.perNode.set(name, count);
  }
}
