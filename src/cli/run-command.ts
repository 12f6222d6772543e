/** `fleet-attach run`: not built yet (see the open issues). */
export async function runCommand(_argv: string[]): Promise<number> {
  console.error('fleet-attach run: not implemented yet');
  return 1;
}
