/**
 * Continue tokens of the paged lists: opaque to clients, they carry the kind of list, the last
 * id served and the filter of the first page, so a token is only accepted by the listing (and
 * filter) that issued it.
 *
 * Paging follows id order. Ids of removed nodes and volumes are recycled (see WorldState), so as
 * with Kubernetes list pagination without a resourceVersion, an object created while a client
 * pages may be missed or, if it takes a recycled id below the cursor, appear on no page; an
 * object that exists throughout appears exactly once.
 */
import { fleetError } from '../errors/index.js';

export type ListKind = 'nodes' | 'volumes';

export function encodeContinue(kind: ListKind, lastId: number, filter = ''): string {
  return Buffer.from(`${kind}:${lastId}:${filter}`, 'utf8').toString('base64url');
}

/** The last id served before this page (-1 for the first page); 400 for a foreign or mangled token. */
export function decodeContinue(token: string | undefined, kind: ListKind, filter = ''): number {
  if (token === undefined) return -1;
  const m = /^([a-z]+):(\d{1,10}):([a-z-]*)$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
  if (m === null || m[1] !== kind || m[3] !== filter) {
    throw fleetError('FA_ERR_HTTP_BAD_REQUEST', `invalid continue token for this ${kind} listing`);
  }
  return Number(m[2]);
}
