/** `fleet-attach sim`: not built yet (issue 2). */
export async function simCommand(_argv: string[]): Promise<number> {
  console.error('fleet-attach sim: not implemented yet');
  return 1;
}
