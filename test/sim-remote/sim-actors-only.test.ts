/**
 * `fleet-attach sim --actors-only --kubeconfig F`: the flag checks (exit 2 naming the flag), the
 * help line, and the command as a process against an empty simulator: it creates the fleet
 * through the API, plays attacher and kubelets, and exits 0 on SIGTERM.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mock, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { startSimulator } from '../../src/sim/server/index.js';

async function exitOf(argv: string[]): Promise<{ code: number; message: string }> {
  const lines: string[] = [];
  const err = mock.method(console, 'error', (...args: unknown[]) => void lines.push(args.map(String).join(' ')));
  const out = mock.method(console, 'log', (...args: unknown[]) => void lines.push(args.map(String).join(' ')));
  try {
    return { code: await main(argv), message: lines.join('\n') };
  } finally {
    err.mock.restore();
    out.mock.restore();
  }
}

test('sim --actors-only: bad flag combinations exit 2 naming the flag', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['sim', '--actors-only'], /--actors-only needs --kubeconfig/],
    [['sim', '--kubeconfig', 'kc.yaml'], /--kubeconfig is for --actors-only/],
    [['sim', '--actors-only', '--kubeconfig', 'kc.yaml', '--listen', ':0'], /--listen is not used with --actors-only/],
    [['sim', '--actors-only', '--kubeconfig', 'kc.yaml', '--faults', 'none'], /--faults is not used with --actors-only/],
    [['sim', '--actors-only', '--kubeconfig', join(tmpdir(), 'fa-no-such-kubeconfig.yaml')], /fa-no-such-kubeconfig\.yaml/],
    [['sim', '--actors-only', '--kubeconfig', 'kc.yaml', '--kube-api-max-in-flight', '0'], /--kube-api-max-in-flight/],
  ];
  for (const [argv, names] of cases) {
    const r = await exitOf(argv);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.message}`);
    assert.match(r.message, names, argv.join(' '));
  }
});

test('sim --help shows the --actors-only form', async () => {
  const r = await exitOf(['sim', '--help']);
  assert.equal(r.code, 0);
  assert.match(r.message, /fleet-attach sim --actors-only --kubeconfig FILE/);
  assert.match(r.message, /--kube-api-qps/);
});

test('sim --actors-only populates and drives a cluster, and exits 0 on SIGTERM', { timeout: 60_000 }, async () => {
  const sim = await startSimulator({ host: '127.0.0.1', port: 0 });
  const dir = mkdtempSync(join(tmpdir(), 'fa-actors-only-'));
  const kcPath = join(dir, 'kubeconfig');
  writeFileSync(kcPath, sim.kubeconfig);
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./cli-child.ts', import.meta.url).pathname,
    'sim', '--actors-only', '--kubeconfig', kcPath, '--nodes', '3', '--pods-per-node', '2', '--seed', '5', '--kube-api-qps', '100'], { env: { ...process.env, LOG_LEVEL: 'info', NODE_TEST_CONTEXT: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  try {
    const end = Date.now() + 40_000;
    // Something else must attach: the actors only finalize VolumeAttachments and set status.attached.
    sim.store.create('volumeattachments', {
      apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va-test' },
      spec: { attacher: 'sim.csi.fleet-attach.io', nodeName: 'node-000001', source: { persistentVolumeName: 'pv-000001-00' } },
    });
    for (;;) {
      const va = sim.store.get('volumeattachments', undefined, 'va-test');
      const attached = (va?.status as { attached?: boolean } | undefined)?.attached === true;
      if (sim.store.count('pods') === 6 && sim.store.count('persistentvolumes') === 6 && attached && /actors running against the cluster/.test(output)) break;
      if (Date.now() > end || child.exitCode !== null) assert.fail(`the actors did not populate and attach: pods ${sim.store.count('pods')}, attached ${attached}\n${output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output.slice(-2000));
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
