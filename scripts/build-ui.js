#!/usr/bin/env node
// Bundles the dashboard (ui/: TypeScript, preact + htm, uPlot) with esbuild into build/ui/:
// index.html (copied), app.js and app.css (minified, with source maps). No CDN: everything the
// page loads comes from this folder. Prints each file's size and the gzip size of the bundle,
// which counts against the first-load budget (docs/dashboard.md).
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const out = join(root, 'build', 'ui');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: join(root, 'ui', 'app.ts') },
  outdir: out,
  bundle: true,
  minify: true,
  sourcemap: 'linked',
  format: 'esm',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  legalComments: 'none',
  logLevel: 'warning',
});
copyFileSync(join(root, 'ui', 'index.html'), join(out, 'index.html'));

let total = 0;
let gzip = 0;
for (const name of readdirSync(out).sort()) {
  if (name.endsWith('.map')) continue;
  const body = readFileSync(join(out, name));
  const gz = gzipSync(body, { level: 9 }).length;
  total += body.length;
  gzip += gz;
  console.error(`build/ui/${name}: ${(body.length / 1024).toFixed(1)} KB, ${(gz / 1024).toFixed(1)} KB gzip`);
}
console.error(`build/ui: ${(total / 1024).toFixed(1)} KB, ${(gzip / 1024).toFixed(1)} KB gzip`);
