/**
 * Scavenges as a child run under `--trace-gc-nvp` reports them, summed between two marker
 * lines the child prints around its measured part.
 */
export interface Scavenges {
  count: number;
  /** Bytes promoted to the old generation. */
  promoted: number;
  /** Bytes kept in the young generation. */
  survived: number;
  /** The main thread's pauses, ms. */
  pauseMs: number;
  /** The helper threads' parallel scavenging (`background.scavenge.parallel`), ms. */
  helperMs: number;
}

export function scavengesBetween(output: string, start: string, end: string): Scavenges {
  const lines = output.slice(output.indexOf(start), output.indexOf(end)).split('\n');
  const out: Scavenges = { count: 0, promoted: 0, survived: 0, pauseMs: 0, helperMs: 0 };
  for (const l of lines) {
    if (!l.includes(' gc=s ')) continue;
    const field = (k: string) => Number(new RegExp(`(?:^|\\s)${k.replaceAll('.', '\\.')}=([0-9.]+)`).exec(l)?.[1] ?? 0);
    out.count++;
    out.promoted += field('promoted');
    out.survived += field('new_space_survived');
    out.pauseMs += field('pause');
    out.helperMs += field('background.scavenge.parallel');
  }
  return out;
}
