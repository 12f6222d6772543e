import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFlags } from '../../src/cli/flags.js';
import { parseDuration, formatDuration } from '../../src/cli/duration.js';
import { isFleetError } from '../../src/errors/index.js';
import { CONTROLLER_FLAGS, controllerOptionsFromFlags } from '../../src/cli/controller-flags.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const specs = {
  'loop-period': { kind: 'duration', default: 100, help: 'loop period', min: 1 },
  'leader-elect': { kind: 'bool', default: true, help: 'leader election' },
  workers: { kind: 'int', default: 1, help: 'workers', min: 0 },
  mode: { kind: 'enum', default: 'on', values: ['on', 'off'], help: 'mode' },
} as const;

test('Go durations parse to milliseconds', () => {
  assert.equal(parseDuration('100ms'), 100);
  assert.equal(parseDuration('6m'), 360_000);
  assert.equal(parseDuration('1m30s'), 90_000);
  assert.equal(parseDuration('24h'), 86_400_000);
  assert.equal(parseDuration('1.5s'), 1500);
  assert.equal(parseDuration('0'), 0);
  assert.equal(parseDuration('10'), undefined);
  assert.equal(parseDuration('1x'), undefined);
  assert.equal(parseDuration(''), undefined);
  assert.equal(formatDuration(90_000), '1m30s');
});

test('flags accept --name value, --name=value and Go-style booleans', () => {
  const r = parseFlags(specs, ['--loop-period', '250ms', '--leader-elect=false', '--workers=3', 'pos']);
  assert.deepEqual(r.flags, { 'loop-period': 250, 'leader-elect': false, workers: 3, mode: 'on' });
  assert.deepEqual(r.positional, ['pos']);
  assert.equal(parseFlags(specs, ['--leader-elect']).flags['leader-elect'], true);
});

test('bad flags throw an error naming the flag', () => {
  const cases: Array<[string[], string]> = [
    [['--nope'], '--nope'],
    [['--loop-period', '10'], '--loop-period'],
    [['--loop-period=0s'], '--loop-period'],
    [['--workers', 'x'], '--workers'],
    [['--mode', 'maybe'], '--mode'],
    [['--leader-elect=yes'], '--leader-elect'],
    [['--workers'], '--workers'],
  ];
  for (const [argv, name] of cases) {
    assert.throws(() => parseFlags(specs, argv), (e: unknown) => isFleetError(e) && e.message.includes(name), argv.join(' '));
  }
});

test('a duration longer than a Node timer can wait is refused, naming the flag', () => {
  assert.equal(parseFlags(specs, ['--loop-period', '596h']).flags['loop-period'], 596 * 3_600_000);
  assert.throws(() => parseFlags(specs, ['--loop-period', '600h']),
    (e: unknown) => isFleetError(e) && e.message.includes('--loop-period') && e.message.includes('at most'));
});

test('the bearer token: one of --http-token and --http-token-file, trimmed, never blank or with whitespace', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fa-token-'));
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const token = (argv: string[]) => controllerOptionsFromFlags(parseFlags(CONTROLLER_FLAGS, argv).flags).httpToken;
  const refused = (argv: string[], flag: string, why: RegExp) =>
    assert.throws(() => token(argv), (err: unknown) => isFleetError(err) && err.code === 'FA_ERR_FLAG_INVALID' && err.message.includes(flag) && why.test(err.message), argv.join(' '));
  assert.equal(token([]), undefined);
  assert.equal(token(['--http-token', ' abc ']), 'abc');
  assert.equal(token(['--http-token-file', file('ok', 'from-secret\n')]), 'from-secret');
  refused(['--http-token-file', file('empty', '\n')], '--http-token-file', /empty/);
  refused(['--http-token', '   '], '--http-token', /empty/);
  refused(['--http-token', 'abc def'], '--http-token', /whitespace/);
  refused(['--http-token-file', file('two', 'abc\tdef\n')], '--http-token-file', /whitespace/);
  refused(['--http-token', 'a', '--http-token-file', file('b', 'b')], '--http-token-file', /not both/);
});

test('leader election needs a Lease name and namespace', () => {
  const opts = (argv: string[]) => controllerOptionsFromFlags(parseFlags(CONTROLLER_FLAGS, argv).flags);
  for (const flag of ['--leader-elect-resource-namespace', '--leader-elect-resource-name']) {
    assert.throws(() => opts([`${flag}=`]), (err: unknown) => isFleetError(err) && err.code === 'FA_ERR_FLAG_INVALID' && err.message.includes(flag));
    assert.doesNotThrow(() => opts([`${flag}=`, '--leader-elect=false']));
  }
});

test('--list-reader picks how list pages are read, and names itself when refused', () => {
  const opts = (argv: string[]) => controllerOptionsFromFlags(parseFlags(CONTROLLER_FLAGS, argv).flags);
  assert.equal(opts([]).listReader, 'worker-sieve');
  for (const r of ['sieve', 'worker-sieve', 'worker', 'inline']) assert.equal(opts(['--list-reader', r]).listReader, r);
  assert.throws(() => opts(['--list-reader', 'simdjson']), (err: unknown) => isFleetError(err) && err.message.includes('--list-reader'));
});
