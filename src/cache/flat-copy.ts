/**
 * A flat copy of a string built by concatenation. V8 keeps `a + b` as a rope (a ConsString
 * pointing at its parts, nested once per `+`), and a rope kept for the life of a volume costs
 * two to four extra heap objects that every major GC marks; unique volume names
 * (`plugin/driver^handle`) are such ropes. One copy when a long-lived name is first stored.
 */
export function flatCopy(s: string): string {
  if (s.length < 13) return s; // V8 builds results shorter than 13 characters flat
  const copy = Buffer.from(s, 'utf8').toString('utf8');
  // Lone surrogates do not survive UTF-8: keep such a string as it is.
  return copy === s ? copy : s;
}
