/**
 * `fleet-attach run` as a supervised child process (node bin/fleet-attach.js, so dist/ must be
 * built), as a Deployment runs it: when it exits without being asked to (it exits 1 after
 * losing its leader lease, as upstream does) it is started again after a short pause, and the
 * exit is recorded. Each instance logs to its own file in `dir`; its /metrics are scraped every
 * couple of seconds for API answers by code (fleet_attach_api_requests_total), so that 403s and
 * 401s of an instance that is later SIGKILLed are not lost with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const BIN = new URL('../../../bin/fleet-attach.js', import.meta.url).pathname;

export interface Instance {
  n: number;
  child: ChildProcess;
  pid: number;
  logPath: string;
  startedAt: number;
  url: string | undefined;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  exit: number | string | undefined;
  /** Killed or stopped by the test (not a crash). */
  expected: boolean;
  /** API answers by code, from the last scrape of this instance's /metrics. */
  codes: Record<string, number>;
}

export interface UnexpectedExit {
  n: number;
  exit: number | string;
  at: number;
  lastLines: string;
}

export interface ControllerProcessOptions {
  dir: string;
  kubeconfig: string;
  /** Flags after `run --kubeconfig F --listen 127.0.0.1:0`; a function gets the instance number (from 1). */
  args: readonly string[] | ((n: number) => readonly string[]);
  /** Pause before a crashed instance is started again, ms (default 1000). */
  restartDelayMs?: number;
  env?: NodeJS.ProcessEnv;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ControllerProcess {
  readonly instances: Instance[] = [];
  readonly unexpectedExits: UnexpectedExit[] = [];
  /** Scrapes that found more 403 answers than the one before: when, which instance, how many more. */
  readonly forbiddenSeen: Array<{ n: number; at: number; more: number }> = [];
  private stopping = false;
  private scrapeTimer: NodeJS.Timeout | undefined;
  private scraping = false;

  constructor(private readonly o: ControllerProcessOptions) {}

  get current(): Instance | undefined {
    return this.instances[this.instances.length - 1];
  }

  /** Starts a new instance (the previous one must have exited). */
  start(): Instance {
    if (this.current && this.current.exit === undefined) throw new Error(`controller instance ${this.current.n} still runs`);
    const n = this.instances.length + 1;
    const logPath = join(this.o.dir, `controller-${n}.log`);
    const fd = openSync(logPath, 'a');
    const child = spawn(process.execPath, [BIN, 'run', '--kubeconfig', this.o.kubeconfig, '--listen', '127.0.0.1:0', ...(typeof this.o.args === 'function' ? this.o.args(n) : this.o.args)], {
      env: { ...process.env, LOG_LEVEL: 'info', ...this.o.env },
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    if (child.pid === undefined) throw new Error('could not start fleet-attach run');
    const inst: Instance = {
      n, child, pid: child.pid, logPath, startedAt: Date.now(), url: undefined, exit: undefined, expected: false, codes: {},
      exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'))),
    };
    void inst.exited.then((exit) => {
      inst.exit = exit;
      if (inst.expected || this.stopping) return;
      const lines = readFileSync(logPath, 'utf8').split('\n').filter(Boolean).slice(-15).join('\n');
      this.unexpectedExits.push({ n, exit, at: Date.now(), lastLines: lines });
      console.log(`controller instance ${n} exited by itself (${exit}); starting another, as a Deployment would`);
      void sleep(this.o.restartDelayMs ?? 1000).then(() => {
        if (!this.stopping && this.current === inst) this.start();
      });
    });
    this.instances.push(inst);
    this.scrapeTimer ??= setInterval(() => void this.scrape(), 2000);
    return inst;
  }

  /** The current instance's inspection URL, once it logged it. */
  urlOf(inst = this.current): string | undefined {
    if (!inst) return undefined;
    if (inst.url) return inst.url;
    if (!existsSync(inst.logPath)) return undefined;
    const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(readFileSync(inst.logPath, 'utf8'));
    if (m) inst.url = m[1];
    return inst.url;
  }

  /** GET a JSON path of the current instance; undefined when it does not answer. */
  async get<T>(path: string): Promise<T | undefined> {
    const url = this.urlOf();
    if (!url) return undefined;
    try {
      const r = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(5000) });
      return (await r.json()) as T;
    } catch {
      return undefined;
    }
  }

  private async scrape(inst = this.current): Promise<void> {
    if (this.scraping || !inst || inst.exit !== undefined) return;
    const url = this.urlOf(inst);
    if (!url) return;
    this.scraping = true;
    try {
      const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      const codes: Record<string, number> = {};
      for (const line of text.split('\n')) {
        if (!line.startsWith('fleet_attach_api_requests_total{')) continue;
        const code = /code="([^"]*)"/.exec(line)?.[1] ?? '?';
        codes[code] = (codes[code] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
      }
      const more = (codes['403'] ?? 0) - (inst.codes['403'] ?? 0);
      if (more > 0) this.forbiddenSeen.push({ n: inst.n, at: Date.now(), more });
      inst.codes = codes;
    } catch {
      // not answering now (starting, stopping, killed): the last scrape stands
    } finally {
      this.scraping = false;
    }
  }

  /** Scrapes the current instance now (before a kill, and at the end). */
  async scrapeNow(): Promise<void> {
    while (this.scraping) await sleep(20);
    await this.scrape();
  }

  /** API answers with `code` across every instance (each as last scraped). */
  answers(code: string): number {
    let n = 0;
    for (const i of this.instances) n += i.codes[code] ?? 0;
    return n;
  }

  /** Kills the current instance with `signal` (not restarted by the supervisor) and waits for it to exit. */
  async kill(signal: NodeJS.Signals): Promise<Instance> {
    const inst = this.current;
    if (!inst || inst.exit !== undefined) throw new Error('no controller instance runs');
    await this.scrapeNow();
    inst.expected = true;
    inst.child.kill(signal);
    await inst.exited;
    return inst;
  }

  /** Stops every instance: SIGTERM, SIGKILL after `graceMs`. Never throws. */
  async stop(graceMs = 15_000): Promise<void> {
    this.stopping = true;
    clearInterval(this.scrapeTimer);
    for (const inst of this.instances) {
      if (inst.exit !== undefined) continue;
      inst.expected = true;
      try {
        inst.child.kill('SIGTERM');
      } catch {
        // gone already
      }
      const t = setTimeout(() => {
        try {
          inst.child.kill('SIGKILL');
        } catch {
          // gone already
        }
      }, graceMs);
      await inst.exited;
      clearTimeout(t);
    }
  }

  /** Log lines of every instance that match `re`, with the instance number. */
  grepLogs(re: RegExp): Array<{ n: number; line: string }> {
    const out: Array<{ n: number; line: string }> = [];
    for (const inst of this.instances) {
      if (!existsSync(inst.logPath)) continue;
      for (const line of readFileSync(inst.logPath, 'utf8').split('\n')) if (re.test(line)) out.push({ n: inst.n, line });
    }
    return out;
  }
}
