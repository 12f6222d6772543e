#!/usr/bin/env node
// The package's command. Runs the compiled host in dist/ (built by `npm run build`, or on demand
// by scripts/ensure-build.js). From a checkout: `node bin/fleet-attach.js <command> [flags]`
// or `npx fleet-attach …` after `npm link`.
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code; },
  (err) => { console.error(err instanceof Error ? err.stack : err); process.exitCode = 1; },
);
