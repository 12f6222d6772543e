/**
 * The one command-line style of every bench: `--name value` (or `--name=value`) flags and
 * `--name` switches, parsed by node:util parseArgs. An unknown flag, a missing value or a stray
 * argument prints the bench's usage and exits 2; `--help` prints it and exits 0.
 *
 * A string flag always takes the next argument as its value, even one starting with `-`
 * (`--controller-args "--workers 0"`, which parseArgs alone would call ambiguous).
 *
 * @example
 *   const flags = benchArgs('bench:kernel', {
 *     sizes: { type: 'string', default: '1000,10000', help: 'fleet sizes (nodes), comma-separated' },
 *     quick: { type: 'boolean', help: 'fewer plans and windows' },
 *   });
 *   const sizes = intList(flags, 'sizes');
 */
import { parseArgs } from 'node:util';

export interface StringFlag {
  type: 'string';
  default?: string;
  /** One line for the usage text; `VALUE` names the value when `arg` is not given. */
  help: string;
  arg?: string;
}
export interface BooleanFlag {
  type: 'boolean';
  help: string;
}
export type FlagSpec = Record<string, StringFlag | BooleanFlag>;

export type FlagValues<F extends FlagSpec> = {
  [K in keyof F]: F[K] extends BooleanFlag ? boolean : F[K] extends { default: string } ? string : string | undefined;
};

/** What `--help` and every usage error print. */
export function usage(script: string, flags: FlagSpec): string {
  const lines = Object.entries(flags).map(([name, f]) => {
    const left = f.type === 'string' ? `--${name} ${f.arg ?? 'VALUE'}` : `--${name}`;
    const dflt = f.type === 'string' && f.default !== undefined ? ` (default ${f.default})` : '';
    return `  ${left.padEnd(34)} ${f.help}${dflt}`;
  });
  return [`usage: npm run ${script} -- [flags]`, ...lines].join('\n');
}

/** Exits 2 with `message` and the usage: the one way a bench refuses its command line. */
export function argError(script: string, flags: FlagSpec, message: string): never {
  console.error(`${script}: ${message}\n${usage(script, flags)}`);
  process.exit(2);
}

/**
 * Parses `argv` (default: this process's arguments) against `flags`. `script` is the npm script
 * name the usage shows (e.g. `bench:e2e`).
 */
export function benchArgs<const F extends FlagSpec>(script: string, flags: F, argv: readonly string[] = process.argv.slice(2)): FlagValues<F> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usage(script, flags));
    process.exit(0);
  }
  // `--name VALUE` with VALUE starting with a dash: joined, so that parseArgs takes it as the value.
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const name = a.startsWith('--') && !a.includes('=') ? a.slice(2) : undefined;
    if (name !== undefined && flags[name]?.type === 'string' && i + 1 < argv.length) {
      joined.push(`${a}=${argv[++i]}`);
    } else joined.push(a);
  }
  const options = Object.fromEntries(Object.entries(flags).map(([name, f]) => [name, f.type === 'string' && f.default !== undefined ? { type: 'string' as const, default: f.default } : { type: f.type }]));
  try {
    const { values } = parseArgs({ args: joined, options, strict: true, allowPositionals: false });
    return values as FlagValues<F>;
  } catch (err) {
    const e = err as Error & { code?: string };
    const unknown = /Unknown option '([^']+)'/.exec(e.message)?.[1];
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) argError(script, flags, `unknown flag ${unknown}`);
    if (e.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') argError(script, flags, `unexpected argument: ${e.message.replace(/^.*?'([^']*)'.*$/s, '$1')} (flags take the form --name value)`);
    argError(script, flags, e.message.split('\n')[0]!);
  }
}

/** The flags given on the command line (not defaulted), e.g. to refuse one that does not apply. */
export function givenFlags(argv: readonly string[] = process.argv.slice(2)): Set<string> {
  return new Set(argv.filter((a) => a.startsWith('--')).map((a) => a.slice(2).split('=')[0]!));
}

/** Converters that exit 2 with the flag's name on a bad value. */
function check<T>(script: string, flags: FlagSpec, name: string, raw: string, parse: (s: string) => T | undefined, what: string): T {
  const v = parse(raw);
  if (v === undefined) argError(script, flags, `--${name}: expected ${what}, got ${JSON.stringify(raw)}`);
  return v;
}

const positiveInt = (s: string) => {
  const n = Number(s);
  return s.trim() !== '' && Number.isInteger(n) && n > 0 ? n : undefined;
};
const nonNegative = (s: string) => {
  const n = Number(s);
  return s.trim() !== '' && Number.isFinite(n) && n >= 0 ? n : undefined;
};

/** A parsed command line and typed readers of its values. */
export interface BenchCommandLine<F extends FlagSpec> {
  values: FlagValues<F>;
  /** A positive integer. */
  int(name: keyof F & string): number;
  /** A non-negative number. */
  num(name: keyof F & string): number;
  /** Comma-separated positive integers. */
  ints(name: keyof F & string): number[];
  /** Refuses (exit 2) with this message. */
  fail(message: string): never;
  /** `npm run <script> -- <the arguments given>`, for the results file. */
  command: string;
}

/** benchArgs with typed readers: the usual entry point of a bench. */
export function commandLine<const F extends FlagSpec>(script: string, flags: F, argv: readonly string[] = process.argv.slice(2)): BenchCommandLine<F> {
  const values = benchArgs(script, flags, argv);
  const raw = (name: string) => {
    const v = (values as Record<string, unknown>)[name];
    if (typeof v !== 'string') argError(script, flags, `--${name}: a value is required`);
    return v;
  };
  return {
    values,
    int: (name) => check(script, flags, name, raw(name), positiveInt, 'a positive integer'),
    num: (name) => check(script, flags, name, raw(name), nonNegative, 'a non-negative number'),
    ints: (name) => raw(name).split(',').map((s) => check(script, flags, name, s, positiveInt, 'positive integers, comma-separated')),
    fail: (message) => argError(script, flags, message),
    command: npmCommand(script, argv),
  };
}

/** The npm command line that reruns a bench with these arguments. */
export function npmCommand(script: string, argv: readonly string[]): string {
  const quote = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  return `npm run ${script}${argv.length ? ` -- ${argv.map(quote).join(' ')}` : ''}`;
}
