/** The simulated Kubernetes API server and the in-process simulator built around it. */
export { startSimulator, type Simulator, type SimulatorOptions } from './start-simulator.js';
export { createApiServer, type ApiServer, type ApiServerOptions } from './api-server.js';
export { buildKubeconfig, writeFileAtomic } from './kubeconfig.js';
export { generateTls, loadTls, type TlsMaterial } from './tls.js';
export { randomToken, DEFAULT_USER, type SimUser } from './auth.js';
export { createWriteLog, SIMULATOR_USER, type WriteLog, type WriteRecord, type WriteVerb } from './write-log.js';
export { createClientFaults, type ClientFaults, type ClientFaultRule, type ClientFaultAction, type ClientMatch } from './client-faults.js';
export { SIMULATOR_CLIENT_SIZING } from './client-sizing.js';
export { ApiError, statusObject } from './status.js';
export type { FaultHooks, RequestFacts, ApiVerb } from './faults.js';
