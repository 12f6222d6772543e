/**
 * One progress bar per bench phase (cli-progress, on stderr so stdout keeps the results): live
 * on a TTY, one line every few seconds otherwise (logs of CI and `npm run bench > file`).
 */
import cliProgress from 'cli-progress';

export interface PhaseBar {
  /** Sets the position and the free-text detail shown after the counts. */
  update(value: number, detail?: string): void;
  setTotal(total: number): void;
  /** Ends the bar, leaving its last line with `detail`. */
  done(detail?: string): void;
}

// Bars still running: a phase that throws must not leave one printing (and keeping the process alive).
const active = new Set<cliProgress.SingleBar>();

/** Stops every bar still running (after a failure). */
export function stopAllBars(): void {
  for (const b of active) b.stop();
  active.clear();
}

export function phaseBar(label: string, total: number, unit: string): PhaseBar {
  const tty = Boolean(process.stderr.isTTY);
  const bar = new cliProgress.SingleBar({
    format: `${label.padEnd(10)} [{bar}] {percentage}% | {value}/{total} ${unit} | {duration_formatted} | {detail}`,
    barsize: 24,
    hideCursor: tty,
    noTTYOutput: !tty,
    notTTYSchedule: 5000,
    etaBuffer: 50,
  }, cliProgress.Presets.shades_classic);
  bar.start(Math.max(1, total), 0, { detail: '' });
  active.add(bar);
  let last = 0;
  return {
    update(value, detail) {
      last = value;
      bar.update(value, detail === undefined ? {} : { detail });
    },
    setTotal(t) {
      bar.setTotal(Math.max(1, t));
    },
    done(detail) {
      bar.update(last, detail === undefined ? {} : { detail });
      bar.stop();
      active.delete(bar);
    },
  };
}
