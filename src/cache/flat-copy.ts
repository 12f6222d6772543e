/**
 * A long-lived string made flat. V8 keeps `a + b` as a rope (a ConsString pointing at its parts,
 * nested once per `+`), and a rope kept for the life of a volume costs two to four extra heap
 * objects that every major GC marks; unique volume names (`plugin/driver^handle`) and store keys
 * (`namespace/name`) are such ropes. Reading a character of a rope makes V8 flatten it in place
 * (one flat copy, which the rope then points to alone), and the next scavenge replaces every
 * reference to such a rope with the flat string, so the rope's objects die young. This costs the
 * one copy; an encode and decode through a Buffer would cost that copy, a Buffer
 * and a comparison of the two, ~2.5× the time. Strings from `JSON.parse` or a Buffer are flat
 * already (a no-op then). Returns `s`, for use in expressions.
 */
export function flatCopy(s: string): string {
  // V8 builds results shorter than 13 characters flat; a read of a flat string changes nothing.
  if (s.length >= 13) s.charCodeAt(0);
  return s;
}
