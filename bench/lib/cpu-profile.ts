/** A V8 CPU profile of the calling thread, taken through the inspector (benches' `--profile` options). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { dirname } from 'node:path';

export interface CpuProfile {
  /** Stops sampling, writes the profile to `file` (creating its folder) and returns `file`. */
  stop(file: string): Promise<string>;
}

/** Starts sampling every `intervalUs` microseconds. */
export async function startCpuProfile(intervalUs = 500): Promise<CpuProfile> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      return file;
    },
  };
}
