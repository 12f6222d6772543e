/**
 * The simulator's debug paths, outside the Kubernetes API (kube-apiserver has no such paths;
 * any authenticated user may use them, and client faults never apply to them):
 *
 *   GET    /debug/write-log?since=<rv>&limit=<n>   committed writes after rv as JSON lines,
 *          oldest first (default limit 100,000: page on with the last rv); headers
 *          X-Write-Log-Oldest-Rv and X-Write-Log-Dropped tell whether the ring lost records.
 *          404 when the simulator runs without a write log.
 *   GET    /debug/write-log/refusals               {user: {code: n}} of refused writes
 *   GET    /debug/faults                           {"rules": [...]}
 *   POST   /debug/faults                           a rule, or {"rules": [...]}: each is set; a rule is
 *          {"user"?, "userAgent"?, "action": {"kind": "delay"|"lag", "ms"} | {"kind": "deny", "code"}
 *          | {"kind": "blackhole"}} (client-faults.ts)
 *   DELETE /debug/faults[?user=…&userAgent=…]      clears that rule, or every rule
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseClientFaultRule, type ClientFaults } from './client-faults.js';
import { parseObject, readBody } from './request-body.js';
import { badRequest, methodNotAllowed, notFound, sendJson } from './status.js';
import type { WriteLog } from './write-log.js';

export const DEBUG_PREFIX = '/debug/';
const DEFAULT_PAGE = 100_000;

export interface DebugContext {
  writeLog: WriteLog | undefined;
  clientFaults: ClientFaults | undefined;
}

export async function serveDebug(ctx: DebugContext, path: string, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  if (path === '/debug/write-log' || path === '/debug/write-log/refusals') {
    if (method !== 'GET') throw methodNotAllowed();
    const log = ctx.writeLog;
    if (!log) throw notFound('the simulator runs without a write log (SimulatorOptions.writeLog)');
    if (path.endsWith('/refusals')) return sendJson(res, 200, JSON.stringify(log.refusals()));
    const since = Number(q.get('since') ?? '0');
    const limit = Number(q.get('limit') ?? DEFAULT_PAGE);
    if (!Number.isInteger(since) || since < 0) throw badRequest(`invalid since: "${q.get('since')}"`);
    if (!Number.isInteger(limit) || limit <= 0) throw badRequest(`invalid limit: "${q.get('limit')}"`);
    const lines = log.since(since, limit).map((r) => JSON.stringify(r)).join('\n');
    const body = lines === '' ? '' : `${lines}\n`;
    res.writeHead(200, {
      'Content-Type': 'application/x-ndjson',
      'Content-Length': Buffer.byteLength(body),
      'X-Write-Log-Oldest-Rv': String(log.oldestRv() ?? 0),
      'X-Write-Log-Dropped': String(log.dropped()),
    });
    return void res.end(body);
  }
  if (path === '/debug/faults') {
    const faults = ctx.clientFaults;
    if (!faults) throw notFound();
    switch (method) {
      case 'GET':
        return sendJson(res, 200, JSON.stringify({ rules: faults.rules() }));
      case 'POST': {
        const body = parseObject(await readBody(req, 64 << 10));
        const rules = Array.isArray(body.rules) ? body.rules.map(parseClientFaultRule) : [parseClientFaultRule(body)];
        for (const r of rules) faults.set(r);
        return sendJson(res, 200, JSON.stringify({ rules: faults.rules() }));
      }
      case 'DELETE': {
        const user = q.get('user') ?? undefined;
        const userAgent = q.get('userAgent') ?? undefined;
        faults.clear(user === undefined && userAgent === undefined ? undefined : { user, userAgent });
        return sendJson(res, 200, JSON.stringify({ rules: faults.rules() }));
      }
      default:
        throw methodNotAllowed();
    }
  }
  throw notFound();
}
