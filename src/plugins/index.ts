/** Volume plugins: specs, the plugin manager, the CSI plugin, the in-tree iSCSI and FC plugins, CSI migration and the multi-attach policy. */
export * from './volume-spec.js';
export * from './volume-plugin.js';
export * from './volume-plugin-manager.js';
export * from './unique-volume-name.js';
export * from './multi-attach.js';
export * from './csi/attachment-name.js';
export * from './csi/volume-attachment-deps.js';
export * from './csi/csi-plugin.js';
export * from './intree/attach-only-plugins.js';
export * from './migration/in-tree-translators.js';
export * from './migration/csi-translator.js';
