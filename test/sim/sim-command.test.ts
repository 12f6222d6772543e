import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseListen, simCommand } from '../../src/sim/command.js';
import { isFleetError } from '../../src/errors/index.js';

test('--listen accepts host:port, :port and [v6]:port', () => {
  assert.deepEqual(parseListen('127.0.0.1:6443'), { host: '127.0.0.1', port: 6443 });
  assert.deepEqual(parseListen(':0'), { host: '127.0.0.1', port: 0 });
  assert.deepEqual(parseListen('[::1]:8443'), { host: '::1', port: 8443 });
  for (const bad of ['6443', 'host:', 'h:99999', 'a:b']) assert.throws(() => parseListen(bad), (e) => isFleetError(e, 'FA_ERR_FLAG_INVALID'), bad);
});

test('bad sim flags throw flag errors (exit code 2 in main)', async () => {
  await assert.rejects(simCommand(['--nodes', '-1']), (e) => isFleetError(e, 'FA_ERR_FLAG_INVALID'));
  await assert.rejects(simCommand(['--no-such-flag']), (e) => isFleetError(e, 'FA_ERR_FLAG_UNKNOWN'));
  await assert.rejects(simCommand(['--attacher', 'maybe']), (e) => isFleetError(e, 'FA_ERR_FLAG_INVALID'));
  await assert.rejects(simCommand(['--tls-cert-file', 'x.pem']), (e) => isFleetError(e, 'FA_ERR_FLAG_INVALID'));
  await assert.rejects(simCommand(['--listen', 'nowhere']), (e) => isFleetError(e, 'FA_ERR_FLAG_INVALID'));
});
