/**
 * A function calling one of V8's natives (`%Name(...)`), which `--allow-natives-syntax` enables
 * for functions compiled after it is set: set here once, before the first one is compiled.
 */
import v8 from 'node:v8';

v8.setFlagsFromString('--allow-natives-syntax');

/** `native(['a', 'b'], 'HaveSameMap')` compiles `(a, b) => %HaveSameMap(a, b)`. */
export function native<F extends (...args: never[]) => unknown>(params: readonly string[], name: string): F {
  return new Function(...params, `return %${name}(${params.join(', ')})`) as F;
}
