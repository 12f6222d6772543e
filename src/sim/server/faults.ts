/**
 * The seam for fault injection: hooks the API server consults on every request.
 * Nothing is injected unless a hook is given; the hooks themselves are built elsewhere.
 */
import type { ResourceName } from '../store/index.js';
import type { ApiError } from './status.js';

export type ApiVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface RequestFacts {
  method: string;
  path: string;
  verb: ApiVerb;
  resource: ResourceName;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** The authenticated user the request acts as (auth.ts). */
  user?: string;
  userAgent?: string;
  /** Aborted when the client goes away before its answer. */
  signal?: AbortSignal;
}

export interface FaultHooks {
  /**
   * Called before a resource request is served. Returning an ApiError answers the request
   * with it (for example 429 TooManyRequests or 500 InternalError) instead of serving it;
   * returning undefined serves it normally. May delay by returning a promise.
   */
  beforeRequest?(facts: RequestFacts): ApiError | undefined | Promise<ApiError | undefined>;
}
