#!/usr/bin/env node
// Builds what is missing or older than its sources: the WASM kernel and the JSON sieve (debug
// and release targets each), the compiled host in dist/ and the dashboard's bundle in build/ui/. `npm start`, `npm test` and the benches call this,
// so a fresh clone needs only `npm ci` first.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

function newest(dir, skip = []) {
  let t = 0;
  if (!existsSync(dir)) return t;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (skip.includes(e.name)) continue;
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}
const mtime = (p) => (existsSync(p) ? statSync(p).mtimeMs : 0);
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });
const asc = join(root, 'node_modules', '.bin', 'asc');
const tsc = join(root, 'node_modules', '.bin', 'tsc');

// The sieve (assembly/sieve/, its own config) shares nothing with the kernel, so a change to one
// rebuilds only that one.
const sieveSrc = Math.max(newest(join(root, 'assembly', 'sieve')), mtime(join(root, 'asconfig.sieve.json')));
const kernelSrc = Math.max(newest(join(root, 'assembly'), ['sieve']), mtime(join(root, 'asconfig.json')));
for (const target of ['debug', 'release']) {
  if (mtime(join(root, 'build', `${target}.wasm`)) < kernelSrc) {
    console.error(`building build/${target}.wasm`);
    run(asc, ['assembly/index.ts', '--target', target]);
  }
  if (mtime(join(root, 'build', `sieve-${target}.wasm`)) < sieveSrc) {
    console.error(`building build/sieve-${target}.wasm`);
    run(asc, ['assembly/sieve/index.ts', '--config', 'asconfig.sieve.json', '--target', target]);
  }
}
const hostSrc = Math.max(newest(join(root, 'src')), mtime(join(root, 'tsconfig.build.json')));
if (newest(join(root, 'dist')) < hostSrc) {
  console.error('building dist/ (tsc -p tsconfig.build.json)');
  run(tsc, ['-p', 'tsconfig.build.json']);
}
const uiSrc = Math.max(newest(join(root, 'ui')), mtime(join(root, 'scripts', 'build-ui.js')));
if (newest(join(root, 'build', 'ui')) < uiSrc) {
  console.error('building build/ui/ (scripts/build-ui.js)');
  run(process.execPath, [join(root, 'scripts', 'build-ui.js')]);
}
