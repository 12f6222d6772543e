/** Schemas of /api/v1/session: the dashboard's login (POST) and logout (DELETE). */
import { Type } from 'typebox';
import { ErrorBody } from './common.js';

export const SessionState = Type.Object({
  tokenRequired: Type.Boolean({ description: 'False without --http-token (loopback only): no login needed' }),
  authenticated: Type.Boolean(),
});

export const createSessionSchema = {
  summary: 'Exchanges --http-token for an HttpOnly, SameSite=Strict session cookie',
  body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }),
  response: { 200: SessionState, 400: ErrorBody, 401: ErrorBody },
};

export const deleteSessionSchema = {
  summary: 'Ends the session of the cookie sent and clears the cookie',
  response: { 200: SessionState },
};

export const getSessionSchema = {
  summary: 'Whether this request is authenticated and whether a token is required at all',
  response: { 200: SessionState },
};
