/**
 * Whether V8 holds a string internalised (in its string table), through the
 * `%IsInternalizedString` native, which `--allow-natives-syntax` enables for functions compiled
 * after it is set.
 *
 * Why tests ask: V8's JSON.parse internalises string values of ten characters or fewer, and an
 * internalised string stays in the old generation until a full collection clears the table
 * (src/kube/packed-rv.ts).
 */
import { native } from './natives.js';

const internalized = native<(s: string) => boolean>(['s'], 'IsInternalizedString');

export function isInternalized(s: string): boolean {
  return internalized(s);
}
