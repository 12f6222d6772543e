/** `fleet-attach demo`: not built yet (see the open issues). */
export async function demoCommand(_argv: string[]): Promise<number> {
  console.error('fleet-attach demo: not implemented yet');
  return 1;
}
