import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { bucketOf, DEFAULT_BUCKETS, hash53, hash64, mix53 } from '../../src/sharding/bucket-hash.js';

const M64 = (1n << 64n) - 1n;

/** The reference: FNV-1a 64 over Buffer's UTF-8, then fmix64, in BigInt. */
function reference(s: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(s, 'utf8')) h = ((h ^ BigInt(byte)) * 0x100000001b3n) & M64;
  return fmix(h);
}

function fmix(k: bigint): bigint {
  k ^= k >> 33n;
  k = (k * 0xff51afd7ed558ccdn) & M64;
  k ^= k >> 33n;
  k = (k * 0xc4ceb9fe1a85ec53n) & M64;
  k ^= k >> 33n;
  return k;
}

describe('bucket hash', () => {
  it('is FNV-1a 64 over the UTF-8 bytes then fmix64, for any string (lone surrogates as U+FFFD)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (s) => {
        const want = reference(s);
        assert.equal(hash64(s), want);
        assert.equal(hash53(s), Number(want >> 11n));
        assert.equal(bucketOf(s), Number(want % BigInt(DEFAULT_BUCKETS)));
        assert.equal(bucketOf(s, 1000), Number(want % 1000n));
      }),
      { numRuns: 2000 },
    );
    assert.equal(hash64(''), fmix(0xcbf29ce484222325n));
    for (const s of ['\ud800', 'a\udc00b', '\udbff\ud800', '\ud83d\ude00', 'é€']) assert.equal(hash64(s), reference(s), JSON.stringify(s));
  });

  it('mix53 is fmix64 of the 64-bit value', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 0xffffffff }), (h, l) => {
        assert.equal(mix53(h, l), Number(fmix((BigInt(h) << 32n) | BigInt(l)) >> 11n));
      }),
    );
  });

  it('spreads 100k synthetic node names over 1,024 buckets within the bounds of a uniform draw', () => {
    // Bounds for n = 100,000 names in B = 1,024 buckets if the hash is uniform: per-bucket counts
    // are Binomial(n, 1/B), mean μ ≈ 97.7, σ ≈ 9.9. Total variation distance from uniform is
    // ≈ ½·B·σ·√(2/π)/n ≈ 0.040 with a standard deviation ≈ 0.001, so 0.045 is 5σ away; the χ²
    // statistic (B−1 = 1,023 degrees of freedom, σ ≈ 45) stays under 1,023 + 5·45 ≈ 1,250; every
    // bucket is within μ ± 5.5σ (≈ 44 to 152).
    const schemes: Array<(i: number) => string> = [
      (i) => `node-${i}`,
      (i) => `ip-10-${(i >> 16) & 255}-${(i >> 8) & 255}-${i & 255}.ec2.internal`,
      (i) => `gke-fleet-pool-${(i % 7).toString(36)}-${(i * 2654435761 >>> 0).toString(16).slice(0, 4)}-${i}`,
      (i) => `nœud-${i}-𝔫`,
    ];
    for (const name of schemes) {
      const n = 100_000;
      const counts = new Uint32Array(DEFAULT_BUCKETS);
      for (let i = 0; i < n; i++) counts[bucketOf(name(i))]++;
      const mean = n / DEFAULT_BUCKETS;
      let tvd = 0;
      let chi2 = 0;
      for (const c of counts) {
        tvd += Math.abs(c - mean) / 2 / n;
        chi2 += (c - mean) ** 2 / mean;
      }
      const what = name(12345);
      assert.ok(tvd < 0.045, `${what}: total variation ${tvd.toFixed(4)}`);
      assert.ok(chi2 < 1250, `${what}: chi-square ${chi2.toFixed(0)}`);
      assert.ok(Math.max(...counts) <= 152, `${what}: fullest bucket ${Math.max(...counts)}`);
      assert.ok(Math.min(...counts) >= 44, `${what}: emptiest bucket ${Math.min(...counts)}`);
    }
  });
});
