/**
 * The one abortable wait of the API clients (retries, leader election): resolves true after
 * `ms`, or false as soon as `signal` aborts (at once if it already has). Never rejects: what
 * an abort means is the caller's to say.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const done = (slept: boolean) => {
      clearTimeout(t);
      signal?.removeEventListener('abort', onAbort);
      resolve(slept);
    };
    const onAbort = () => done(false);
    const t = setTimeout(() => done(true), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
