/** Schemas of /healthz and /readyz (always open, even off loopback). */
import { Type } from 'typebox';
import { StringEnum } from './common.js';

const Role = StringEnum(['leader', 'standby', 'single', 'shard']);

export const healthzSchema = {
  summary: 'Process alive',
  response: { 200: Type.Object({ status: Type.Literal('ok') }) },
};

export const readyzSchema = {
  summary: 'Ready: watches synced and worker pool up; says leader, standby or single',
  response: {
    200: Type.Object({ ready: Type.Literal(true), role: Role }),
    503: Type.Object({ code: Type.String(), message: Type.String(), role: Role }, { description: 'Not ready' }),
  },
};
