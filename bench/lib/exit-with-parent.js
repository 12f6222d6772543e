// Preloaded (`node --import <this> bin/fleet-attach.js …`) into a process a bench spawns with an
// IPC channel: when the bench goes away for any reason, even SIGKILL, the channel closes and
// this process stops itself (SIGTERM to itself, so it shuts down as usual; exit after 10 s if
// that hangs). Without a channel it does nothing. Plain JS so the measured process loads no
// TypeScript loader.
if (process.channel) {
  process.channel.unref();
  process.once('disconnect', () => {
    setTimeout(() => process.exit(1), 10_000).unref();
    process.kill(process.pid, 'SIGTERM');
  });
}
