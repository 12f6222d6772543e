/**
 * The Kubernetes client layer: kubeconfig and shared agents, the write/read API client with its
 * rate limiter, the list+watch reflectors with their projections, and error predicates.
 */
export { FleetKubeConfig, loadKubeConfig, type LoadKubeConfigOptions } from './kube-config.js';
export {
  createKubeApiClient,
  type CallOptions,
  type EventBody,
  type EventPatchBody,
  type KubeApiClient,
  type KubeApiClientOptions,
  type VolumeAttachmentBody,
} from './api-client.js';
export { createReflector, type Reflector, type ReflectorOptions, type ReflectorStats } from './reflector.js';
export type { ProjectionHandler } from './projection-store.js';
export type { ListSummary } from './list-pages.js';
export { createRateLimiter, DEFAULT_BURST, DEFAULT_QPS, type RateLimiter, type RateLimiterOptions } from './rate-limiter.js';
export type { RequestHook, RequestReport } from './request-hook.js';
export {
  isAlreadyExists,
  isConflict,
  isGone,
  isNotFound,
  isTooManyRequests,
  kubeErrorDetails,
  statusCodeOf,
  type KubeErrorDetails,
} from './kube-errors.js';
export * from './projections/index.js';
