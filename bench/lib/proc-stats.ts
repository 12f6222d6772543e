/**
 * CPU time and memory of another process, read from Linux /proc (Node's own process APIs only
 * see the current process). CPU includes every thread (worker threads, GC, libuv pool).
 * `VmHWM` is the kernel's own high-water mark of the resident set, so the peak is exact
 * however rarely one samples; the sampler adds a timeline of RSS for the record.
 */
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

export interface ProcSample {
  /** User + system CPU seconds since the process started. */
  cpuS: number;
  /** Resident set now, MiB. */
  rssMb: number;
  /** Peak resident set since the process started (VmHWM), MiB. */
  peakRssMb: number;
}

let ticks: number | undefined;

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`, 100 on Linux). */
function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/**
 * Resident MiB by kind of mapping: `heap` (the main malloc arena: the ArrayBuffer backing stores
 * of the main thread), `anon` (V8's heap pages, worker threads' malloc arenas, stacks), `file`
 * (the executable and libraries). Undefined once the process is gone.
 */
export function rssByMapping(pid: number): { heap: number; anon: number; file: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = { heap: 0, anon: 0, file: 0 };
  let kind: keyof typeof kb = 'anon';
  for (const line of text.split('\n')) {
    const m = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m) kind = m[1] === '[heap]' ? 'heap' : m[1] === '' || m[1].startsWith('[') ? 'anon' : 'file';
    else if (line.startsWith('Rss:')) kb[kind] += Number(/(\d+)/.exec(line)?.[1] ?? 0);
  }
  return { heap: Math.round(kb.heap / 1024), anon: Math.round(kb.anon / 1024), file: Math.round(kb.file / 1024) };
}

/** One reading; undefined once the process is gone. */
export function readProc(pid: number): ProcSample | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may contain spaces: fields count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { cpuS: (utime + stime) / clockTicks(), rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

export interface ProcSampler {
  /** Latest reading (kept after the process exits). */
  last(): ProcSample;
  /** RSS samples, [seconds since start, MiB]. */
  timeline(): Array<[number, number]>;
  stop(): void;
}

/** Reads `pid` every `intervalMs` until stopped or the process is gone. */
export function sampleProcess(pid: number, intervalMs = 1000): ProcSampler {
  const t0 = performance.now();
  let latest: ProcSample = readProc(pid) ?? { cpuS: 0, rssMb: 0, peakRssMb: 0 };
  const points: Array<[number, number]> = [[0, latest.rssMb]];
  const timer = setInterval(() => {
    const s = readProc(pid);
    if (!s) return clearInterval(timer);
    latest = s;
    points.push([(performance.now() - t0) / 1000, s.rssMb]);
  }, intervalMs);
  timer.unref();
  return {
    last() {
      latest = readProc(pid) ?? latest;
      return latest;
    },
    timeline: () => points,
    stop: () => clearInterval(timer),
  };
}

/**
 * CPU pressure (Linux PSI, /proc/pressure/cpu): the share of the last 10 s and 60 s in which
 * some runnable task waited for a CPU. On a shared machine this says how much of the figures
 * is contention; undefined where PSI is unavailable.
 */
export function cpuPressure(): { some_avg10: number; some_avg60: number } | undefined {
  try {
    const m = /^some avg10=([\d.]+) avg60=([\d.]+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'));
    return m ? { some_avg10: Number(m[1]), some_avg60: Number(m[2]) } : undefined;
  } catch {
    return undefined;
  }
}
