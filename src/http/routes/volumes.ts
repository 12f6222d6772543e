/**
 * /api/v1/volumes/{uniqueName} and /api/v1/volumes?pv=. Unique names contain `/` and `^`: the
 * documented form is URL-encoded (one path segment); a raw name with slashes is accepted too.
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { fleetError } from '../../errors/index.js';
import { decodeContinue } from '../continue-token.js';
import { readContext } from '../pair-view.js';
import { DEFAULT_LIMIT } from '../schemas/common.js';
import { getVolumeSchema, listVolumesSchema, UniqueName } from '../schemas/volumes.js';
import { listVolumes, volumeDetail, volumesOfPv } from '../volume-view.js';
import type { RouteDeps } from './route-deps.js';
import { timelineOf } from './dashboard.js';

const TIMELINE = '/timeline';

export const volumeRoutes: FastifyPluginCallbackTypebox<RouteDeps> = (app, deps, done) => {
  const detail = (uniqueName: string, limit: number | undefined) => {
    const id = deps.state.findVolume(uniqueName);
    if (id === undefined) throw fleetError('FA_ERR_HTTP_VOLUME_NOT_FOUND', `volume ${uniqueName} not found`);
    return volumeDetail(readContext(deps.state, deps.view), id, limit ?? DEFAULT_LIMIT);
  };

  app.get('/api/v1/volumes', { schema: listVolumesSchema }, (request) => {
    const { pv, limit = DEFAULT_LIMIT } = request.query;
    const ctx = readContext(deps.state, deps.view);
    if (pv !== undefined) {
      if (request.query.continue !== undefined) throw fleetError('FA_ERR_HTTP_BAD_REQUEST', 'continue cannot be combined with pv');
      return volumesOfPv(ctx, pv, limit);
    }
    return listVolumes(ctx, decodeContinue(request.query.continue, 'volumes'), limit);
  });

  app.get('/api/v1/volumes/:uniqueName', { schema: getVolumeSchema }, (request) => {
    return detail(request.params.uniqueName, request.query.limit);
  });

  // `kubernetes.io/csi/driver^handle` typed without encoding spans several segments; so does
  // its timeline (`…/timeline`, routes/dashboard.ts), answered here when the name without the
  // suffix is a volume and the whole name is not. Two answer shapes: no response schema.
  const rawSchema = { params: Type.Object({ '*': UniqueName }), querystring: getVolumeSchema.querystring };
  app.get('/api/v1/volumes/*', { schema: rawSchema, config: { openapi: false } }, (request) => {
    const name = request.params['*'];
    if (name.endsWith(TIMELINE) && deps.state.findVolume(name) === undefined) {
      const volume = name.slice(0, -TIMELINE.length);
      if (deps.state.findVolume(volume) !== undefined || deps.dashboard.timeline.entries(volume).length > 0) return timelineOf(deps.dashboard, deps.state, volume);
    }
    return detail(name, request.query.limit);
  });
  done();
};
