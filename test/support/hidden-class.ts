/**
 * Whether two objects share V8's hidden class (map), through the `%HaveSameMap` native, which
 * `--allow-natives-syntax` enables for functions compiled after it is set.
 *
 * Why tests ask: on Node 20 (V8 11.3) a property added to an object made by a spread gets a
 * class of its own once the code is warm (src/kube/raw-write.ts, h2RequestOptions). The
 * builders on the request and store paths avoid that; {@link warmPair} gives a test two objects
 * a builder made after thousands of calls, where the difference shows.
 */
import { native } from './natives.js';

const same = native<(a: object, b: object) => boolean>(['a', 'b'], 'HaveSameMap');

export function haveSameHiddenClass(a: object, b: object): boolean {
  return same(a, b);
}

/** The last two of `n` objects `make(i)` returns (the earlier calls warm the code up). */
export function warmPair<T extends object>(make: (i: number) => T, n = 3000): [T, T] {
  let prev = make(0);
  let last = prev;
  for (let i = 1; i < n; i++) {
    prev = last;
    last = make(i);
  }
  return [prev, last];
}
