/** Events about pods: texts (J1, J2, H3, H6), correlation and the recorder. */
export * from './event-messages.js';
export * from './event-recorder.js';
export { COMBINED_PREFIX } from './event-correlator.js';
