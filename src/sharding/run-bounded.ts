/**
 * Runs tasks with at most `limit` in flight, in order of the array; resolves when all have
 * settled. A task's rejection is handed to `onError` and does not stop the others.
 */
export async function runBounded(tasks: ReadonlyArray<() => Promise<void>>, limit: number, onError: (err: unknown) => void): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const task = tasks[next++] as () => Promise<void>;
      try {
        await task();
      } catch (err) {
        onError(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
}
