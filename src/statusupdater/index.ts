/** Node status updater: writes node.status.volumesAttached (K1–K5). */
export * from './node-status-updater.js';
