/**
 * Bad flags and kubeconfigs: the command exits 2 with a message naming the problem,
 * before it starts anything.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it, mock } from 'node:test';
import { main } from '../../src/cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'fa-badcli-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

async function exitOf(argv: string[]): Promise<{ code: number; message: string }> {
  const errors: string[] = [];
  const spy = mock.method(console, 'error', (...args: unknown[]) => void errors.push(args.map(String).join(' ')));
  try {
    const code = await Promise.race([
      main(argv),
      new Promise<number>((_, reject) => setTimeout(() => reject(new Error(`${argv.join(' ')} did not exit`)), 20_000).unref()),
    ]);
    return { code, message: errors.join('\n') };
  } finally {
    spy.mock.restore();
  }
}

describe('bad command lines exit 2 naming the problem', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cases: Array<[string, () => string[], RegExp]> = [
    ['a missing kubeconfig file', () => ['run', '--kubeconfig', join(dir, 'nope.yaml')], /nope\.yaml/],
    ['a kubeconfig that is not YAML', () => ['run', '--kubeconfig', file('garbage.yaml', ':\n  - [unclosed')], /kubeconfig|garbage\.yaml/i],
    ['a kubeconfig without clusters', () => ['run', '--kubeconfig', file('empty.yaml', 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n')], /cluster|context/i],
    ['a bad duration', () => ['run', '--loop-period', 'banana'], /--loop-period/],
    ['an unknown flag', () => ['run', '--no-such-flag'], /--no-such-flag/],
    ['a bad fault spec item', () => ['sim', '--faults', 'error500=0.01,bogus=1'], /bogus=1/],
    ['a fault fraction out of range', () => ['sim', '--faults', 'error500=2'], /error500=2/],
  ];
  for (const [what, argv, names] of cases) {
    it(what, async () => {
      const r = await exitOf(argv());
      assert.equal(r.code, 2, r.message);
      assert.match(r.message, names);
    });
  }
});
