/** Schema of /metrics: Prometheus text exposition format (not JSON). */
import { Type } from 'typebox';
import { protectedErrors } from './common.js';

export const metricsSchema = {
  summary: 'Prometheus metrics (text format 0.0.4)',
  response: {
    200: { description: 'Metrics', content: { 'text/plain': { schema: Type.String() } } },
    401: protectedErrors[401],
  },
};
