/**
 * Declarative command-line flags with Go/pflag conventions, so the commands read like
 * kube-controller-manager's: `--name value` or `--name=value`; booleans as `--flag`,
 * `--flag=true`, `--flag=false`; durations in Go form (see duration.ts).
 *
 * Contract: {@link parseFlags} never exits; it throws a FleetError (`FA_ERR_FLAG_UNKNOWN` or
 * `FA_ERR_FLAG_INVALID`) whose message names the flag. Commands turn that into exit code 2.
 */
import { fleetError } from '../errors/index.js';
import { parseDuration, formatDuration } from './duration.js';

/** The longest timer Node honours (ms); a duration flag above it is refused. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

type FlagKind = 'string' | 'int' | 'float' | 'bool' | 'duration' | 'enum';

export interface FlagSpec<K extends FlagKind = FlagKind> {
  kind: K;
  default: FlagValue<K>;
  help: string;
  /** Allowed values for `enum`. */
  values?: readonly string[];
  /** Inclusive numeric bounds for int, float and duration (milliseconds). */
  min?: number;
  max?: number;
  /** The upstream kube-controller-manager flag this mirrors, for the README table. */
  upstream?: string;
}

type FlagValue<K extends FlagKind> = K extends 'bool' ? boolean : K extends 'string' | 'enum' ? string : number;
export type FlagSpecs = Record<string, FlagSpec>;
export type ParsedFlags<S extends FlagSpecs> = { [N in keyof S]: FlagValue<S[N]['kind']> };

export interface ParseResult<S extends FlagSpecs> {
  flags: ParsedFlags<S>;
  /** Arguments that are not flags, in order. */
  positional: string[];
  /** True when `--help`/`-h` was given. */
  help: boolean;
}

/** Parses argv against specs. Durations come back in milliseconds. */
export function parseFlags<S extends FlagSpecs>(specs: S, argv: readonly string[]): ParseResult<S> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) out[name] = spec.default;
  const positional: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') { positional.push(...argv.slice(i + 1)); break; }
    if (arg === '-h' || arg === '--help') { help = true; continue; }
    if (!arg.startsWith('--')) {
      if (arg.startsWith('-') && arg.length > 1) throw fleetError('FA_ERR_FLAG_UNKNOWN', `unknown flag: ${arg} (flags are written --name)`);
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const spec = specs[name];
    if (!spec) throw fleetError('FA_ERR_FLAG_UNKNOWN', `unknown flag: --${name}`);
    let raw: string | undefined = eq === -1 ? undefined : arg.slice(eq + 1);
    if (raw === undefined) {
      if (spec.kind === 'bool') { out[name] = true; continue; }
      if (i + 1 >= argv.length) throw fleetError('FA_ERR_FLAG_INVALID', `flag needs an argument: --${name}`);
      raw = argv[++i];
    }
    out[name] = convert(name, spec, raw);
  }
  return { flags: out as ParsedFlags<S>, positional, help };
}

function convert(name: string, spec: FlagSpec, raw: string): unknown {
  const bad = (why: string) => fleetError('FA_ERR_FLAG_INVALID', `invalid value "${raw}" for flag --${name}: ${why}`);
  let v: number;
  switch (spec.kind) {
    case 'string':
      return raw;
    case 'enum':
      if (!spec.values?.includes(raw)) throw bad(`must be one of ${spec.values?.join(', ')}`);
      return raw;
    case 'bool':
      if (['true', '1', 't', 'T', 'TRUE', 'True'].includes(raw)) return true;
      if (['false', '0', 'f', 'F', 'FALSE', 'False'].includes(raw)) return false;
      throw bad('must be true or false');
    case 'int':
      if (!/^[+-]?\d+$/.test(raw)) throw bad('must be an integer');
      v = Number(raw);
      break;
    case 'float':
      v = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(v)) throw bad('must be a number');
      break;
    case 'duration': {
      const d = parseDuration(raw);
      if (d === undefined) throw bad('must be a Go duration such as 100ms, 6m or 1m30s');
      v = d;
      break;
    }
  }
  if (spec.min !== undefined && v < spec.min) throw bad(`must be at least ${spec.kind === 'duration' ? formatDuration(spec.min) : spec.min}`);
  // Durations become timers, and Node fires a timer longer than 2^31-1 ms after 1 ms.
  const max = spec.max ?? (spec.kind === 'duration' ? MAX_TIMER_MS : undefined);
  if (max !== undefined && v > max) throw bad(`must be at most ${spec.kind === 'duration' ? formatDuration(max) : max}`);
  return v;
}

/** Renders a help text: one line per flag with its default. */
export function flagHelp(specs: FlagSpecs): string {
  return Object.entries(specs)
    .map(([name, s]) => {
      const def = s.kind === 'duration' ? formatDuration(s.default as number) : JSON.stringify(s.default);
      return `  --${name.padEnd(40)} ${s.help} (default ${def})`;
    })
    .join('\n');
}
