/** /api/v1/nodes (paged, filtered) and /api/v1/nodes/{name}. */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { fleetError } from '../../errors/index.js';
import { decodeContinue } from '../continue-token.js';
import { listNodes, nodeDetail } from '../node-view.js';
import { readContext } from '../pair-view.js';
import { DEFAULT_LIMIT } from '../schemas/common.js';
import { getNodeSchema, listNodesSchema } from '../schemas/nodes.js';
import type { RouteDeps } from './route-deps.js';

export const nodeRoutes: FastifyPluginCallbackTypebox<RouteDeps> = (app, deps, done) => {
  app.get('/api/v1/nodes', { schema: listNodesSchema }, (request) => {
    const { limit = DEFAULT_LIMIT, state: filter } = request.query;
    const after = decodeContinue(request.query.continue, 'nodes', filter);
    return listNodes(readContext(deps.state, deps.view), after, limit, filter);
  });

  app.get('/api/v1/nodes/:name', { schema: getNodeSchema }, (request) => {
    const { name } = request.params;
    const id = deps.state.findNode(name);
    const node = id === undefined ? undefined : deps.state.node(id);
    if (node === undefined) throw fleetError('FA_ERR_HTTP_NODE_NOT_FOUND', `node ${name} not found`);
    return nodeDetail(readContext(deps.state, deps.view), node);
  });
  done();
};
