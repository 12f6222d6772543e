#!/usr/bin/env node
// The package's command. Runs the compiled host in dist/ (built by `npm run build`, or on demand
// by scripts/ensure-build.js). From a checkout: `node bin/fleet-attach.js <command> [flags]`
// or `npx fleet-attach …` after `npm link`.
import { main } from '../dist/cli/main.js';

// Once main has settled the process should end by itself; a handle some library left open must
// not keep a stopped controller alive (a supervisor waits for it), so it gets 5 s.
const exitSoon = () => setTimeout(() => process.exit(), 5000).unref();
main(process.argv.slice(2)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code; exitSoon(); },
  (err) => { console.error(err instanceof Error ? err.stack : err); process.exitCode = 1; exitSoon(); },
);
