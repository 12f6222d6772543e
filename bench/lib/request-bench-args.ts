/**
 * The command line the request benches share (`--requests`, `--rounds`, `--concurrency`,
 * `--out`), with each bench's own defaults.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export interface RequestBenchArgs {
  requests: number;
  rounds: number;
  concurrency: number;
  out: string;
}

/** `results`: the default output file's name under bench/results/. */
export function requestBenchArgs(defaults: { requests: number; rounds: number; concurrency?: number; results: string }): RequestBenchArgs {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: String(defaults.requests) },
      rounds: { type: 'string', default: String(defaults.rounds) },
      concurrency: { type: 'string', default: String(defaults.concurrency ?? 64) },
      out: { type: 'string', default: fileURLToPath(new URL(`../results/${defaults.results}`, import.meta.url)) },
    },
  });
  return { requests: Number(values.requests), rounds: Number(values.rounds), concurrency: Number(values.concurrency), out: values.out };
}
