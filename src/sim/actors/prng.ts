/**
 * A small seeded PRNG (mulberry32) so that a fleet and its actors replay identically for a
 * given `--seed`. Not for cryptography. Each actor derives its own stream with
 * {@link Prng.fork}, so switching one actor off does not change what the others draw.
 */
export interface Prng {
  /** Uniform 32-bit unsigned integer. */
  u32(): number;
  /** Uniform float in [0, 1). */
  float(): number;
  /** Uniform integer in [0, n); n must be ≥ 1. */
  int(n: number): number;
  /** True with probability p (p ≤ 0 never, p ≥ 1 always). */
  chance(p: number): boolean;
  /** Exponentially distributed delay with the given mean (for Poisson arrivals). */
  exponential(mean: number): number;
  /** Eight lowercase hex digits. */
  hex8(): string;
  /** An independent stream derived from this seed and a label. */
  fork(label: string): Prng;
}

export function createPrng(seed: number): Prng {
  return new Mulberry32(seed >>> 0);
}

class Mulberry32 implements Prng {
  private state: number;
  private readonly seed: number;

  constructor(seed: number) {
    this.seed = seed;
    this.state = seed;
  }

  u32(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  float(): number {
    return this.u32() / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  chance(p: number): boolean {
    if (p <= 0) return false;
    if (p >= 1) return true;
    return this.float() < p;
  }

  exponential(mean: number): number {
    return -Math.log(1 - this.float()) * mean;
  }

  hex8(): string {
    return this.u32().toString(16).padStart(8, '0');
  }

  fork(label: string): Prng {
    // FNV-1a of the label mixed with the parent seed: stable across runs and platforms.
    let h = 0x811c9dc5 ^ this.seed;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
    return new Mulberry32(h >>> 0);
  }
}
