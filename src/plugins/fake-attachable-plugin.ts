/**
 * A controllable attachable plugin for reconciler and operation tests: it supports CSI specs
 * like the real plugin (same volume names), records every call, and lets the test decide when
 * and how each attach/detach ends. For end-to-end behaviour against VolumeAttachments, use the
 * real CSI plugin with csi/fake-volume-attachments.ts instead.
 */
import { CSI_PLUGIN_NAME, csiVolumeName } from './unique-volume-name.js';
import type { AttachResult, AttachableVolumePlugin } from './volume-plugin.js';
import { csiPersistentSource, type VolumeSpec } from './volume-spec.js';

export interface FakePluginCall {
  readonly op: 'attach' | 'detach';
  /** Plugin volume name (`<driver>^<handle>`). */
  readonly volumeName: string;
  readonly nodeName: string;
  readonly spec?: VolumeSpec;
  /** Ends the call: no argument = success, an Error = failure with its message. */
  finish(error?: Error): void;
  readonly settled: boolean;
}

export interface FakeAttachablePlugin extends AttachableVolumePlugin {
  readonly calls: FakePluginCall[];
  /** When true (default false), calls end at once with success instead of waiting for `finish`. */
  autoSucceed: boolean;
  /** Answers `canAttach`; default true. */
  attachable: (spec: VolumeSpec) => boolean;
  /** Answers `volumesAreAttached` per (volume name, node); default true. */
  stillAttached: (volumeName: string, nodeName: string) => boolean;
  /** Calls not finished yet. */
  pending(): FakePluginCall[];
}

export function createFakeAttachablePlugin(opts: { name?: string; autoSucceed?: boolean } = {}): FakeAttachablePlugin {
  const calls: FakePluginCall[] = [];
  const start = (op: 'attach' | 'detach', volumeName: string, nodeName: string, spec?: VolumeSpec): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      let settled = false;
      const call: FakePluginCall = {
        op,
        volumeName,
        nodeName,
        ...(spec ? { spec } : {}),
        finish(error?: Error) {
          if (settled) return;
          settled = true;
          if (error) reject(error);
          else resolve();
        },
        get settled() {
          return settled;
        },
      };
      calls.push(call);
      if (fake.autoSucceed) call.finish();
    });
  const nameOf = (spec: VolumeSpec): string | undefined => {
    const src = csiPersistentSource(spec);
    return src && src.volumeHandle !== '' ? csiVolumeName(src.driver, src.volumeHandle) : undefined;
  };
  const fake: FakeAttachablePlugin = {
    name: opts.name ?? CSI_PLUGIN_NAME,
    calls,
    autoSucceed: opts.autoSucceed ?? false,
    attachable: () => true,
    stillAttached: () => true,
    canSupport: (spec) => spec.source.type === 'csi',
    getVolumeName: nameOf,
    canAttach: (spec) => nameOf(spec) !== undefined && fake.attachable(spec),
    async attach(spec, nodeName): Promise<AttachResult> {
      await start('attach', nameOf(spec) ?? spec.name, nodeName, spec);
      return { devicePath: '' };
    },
    detach: (volumeName, nodeName) => start('detach', volumeName, nodeName),
    volumesAreAttached: (specs, nodeName) => specs.map((s) => fake.stillAttached(nameOf(s) ?? s.name, nodeName)),
    pending: () => calls.filter((c) => !c.settled),
  };
  return fake;
}
