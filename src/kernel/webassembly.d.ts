// The subset of the WebAssembly JS API the kernel host uses. tsconfig's lib (ES2023) and
// @types/node 20 do not declare it (only lib.dom does, which would drag in the browser
// globals). Interfaces merge, so another declaration of the same names stays compatible.
declare namespace WebAssembly {
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
    shared?: boolean;
  }
  interface Memory {
    readonly buffer: ArrayBuffer | SharedArrayBuffer;
    grow(delta: number): number;
  }
  var Memory: {
    prototype: Memory;
    new (descriptor: MemoryDescriptor): Memory;
  };
  interface Module {}
  interface ModuleImportDescriptor {
    module: string;
    name: string;
    kind: 'function' | 'table' | 'memory' | 'global' | 'tag';
  }
  interface ModuleExportDescriptor {
    name: string;
    kind: 'function' | 'table' | 'memory' | 'global' | 'tag';
  }
  var Module: {
    prototype: Module;
    new (bytes: ArrayBufferView | ArrayBuffer): Module;
    imports(module: Module): ModuleImportDescriptor[];
    exports(module: Module): ModuleExportDescriptor[];
  };
  type ExportValue = ((...args: number[]) => number) | Memory;
  interface Instance {
    readonly exports: Record<string, ExportValue>;
  }
  var Instance: {
    prototype: Instance;
    new (module: Module, imports?: Record<string, Record<string, unknown>>): Instance;
  };
  function compile(bytes: ArrayBufferView | ArrayBuffer): Promise<Module>;
}
