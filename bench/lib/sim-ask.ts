/**
 * One request to the simulator child over its IPC channel (sim-child.ts): the command, and the
 * first message of the answer's type (and `match`, when given) after it.
 */
import { nextMessage, type Child } from './children.js';
import type { SimChildCommand, SimChildMessage } from './sim-child.js';

export type SimAnswer<T extends SimChildMessage['type']> = Extract<SimChildMessage, { type: T }>;

export function askSim<T extends SimChildMessage['type']>(sim: Child, command: SimChildCommand, answer: T, timeoutMs: number, match?: (m: SimAnswer<T>) => boolean): Promise<SimAnswer<T>> {
  const reply = nextMessage<SimChildMessage>(sim, (m) => m.type === answer && (match === undefined || match(m as SimAnswer<T>)), timeoutMs);
  sim.process.send(command);
  return reply as Promise<SimAnswer<T>>;
}
