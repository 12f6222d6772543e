/**
 * Interner: the world state's node and volume names to dense integer ids and back, off the
 * JavaScript heap (src/packed/string-interner.ts has the contract: ids reused about last freed
 * first, freed ids dormant until handed to another name, `name(id)` a fresh string).
 */
export { StringInterner as Interner } from '../packed/string-interner.js';
