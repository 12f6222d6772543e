/**
 * The e2e bench's handle on the simulator child's commit-side latency (pod-va-commit-tracker.ts,
 * `--pod-va-source commit`): each call is one `pod-va` command over the child's IPC channel,
 * answered before the call resolves, so a window begun here has begun there.
 */
import { readFileSync } from 'node:fs';
import type { Child } from './children.js';
import type { PodVaResult } from './pod-va-latency.js';
import type { PodVaSource } from './pod-va-tracker.js';
import { askSim } from './sim-ask.js';
import type { SimChildCommand, SimChildMessage } from './sim-child.js';

type PodVaMessage = Extract<SimChildMessage, { type: 'pod-va' }>;
type ResultMessage = Extract<PodVaMessage, { op: 'result' }>;

const ANSWER_MS = 60_000;

export class RemotePodVa implements PodVaSource {
  readonly kind = 'commit';
  private last: ResultMessage | undefined;

  /** `podLinesFile`: where the child writes the pod changes for the JSON.parse baseline. */
  constructor(private readonly sim: Child, private readonly podLinesFile: string) {}

  async start(): Promise<void> {
    await this.command({ type: 'pod-va', op: 'start' });
  }

  async beginWindow(): Promise<void> {
    await this.command({ type: 'pod-va', op: 'begin' });
  }

  async endWindow(): Promise<void> {
    await this.command({ type: 'pod-va', op: 'end' });
  }

  async result(): Promise<PodVaResult> {
    this.last = (await this.command({ type: 'pod-va', op: 'result', podLinesFile: this.podLinesFile })) as ResultMessage;
    return this.last.result;
  }

  /** The lines written with the last result (none before it). */
  async podLines(): Promise<string[]> {
    if (!this.last || this.last.podLines === 0) return [];
    return readFileSync(this.podLinesFile, 'utf8').split('\n');
  }

  stop(): void {
    if (this.sim.process.exitCode === null && this.sim.process.connected) this.sim.process.send({ type: 'pod-va', op: 'stop' } satisfies SimChildCommand);
  }

  private command(c: Extract<SimChildCommand, { type: 'pod-va' }>): Promise<PodVaMessage> {
    return askSim(this.sim, c, 'pod-va', ANSWER_MS, (m) => m.op === c.op);
  }
}
