/**
 * Runs the controller and its inspection API together until a signal: the `run` command's
 * body, also used by `demo`. Stops in order on SIGTERM/SIGINT (no new operations, watches
 * closed, HTTP closed) and resolves with exit code 0.
 */
import { buildServer, listenServer } from '../http/server.js';
import { logger } from '../log/logger.js';
import { stdoutClosed } from '../log/stdout-closed.js';
import { startController, type Controller } from './controller.js';
import { DEFAULT_CONTROLLER_OPTIONS, type ControllerOptions } from './controller-options.js';
import { createInspectionView } from './inspection.js';
import { parseListen } from '../http/server.js';
import { requireTokenOffLoopback } from '../http/auth-hook.js';

export interface RunningController {
  ctl: Controller;
  url: string;
  stop(): Promise<void>;
}

export async function startControllerWithApi(o: Partial<ControllerOptions> & Pick<ControllerOptions, 'kubeconfig'> & { listen: string; httpToken?: string }): Promise<RunningController> {
  const { host } = parseListen(o.listen);
  // Before anything starts: a refused configuration must not touch the cluster first.
  requireTokenOffLoopback(host, o.httpToken);
  const ctl = await startController(o);
  const view = createInspectionView(ctl, { ...DEFAULT_CONTROLLER_OPTIONS, ...o });
  let app;
  try {
    app = buildServer({ state: ctl.state, view, metrics: ctl.metrics, dashboard: ctl.dashboard, listenHost: host, ...(o.httpToken ? { httpToken: o.httpToken } : {}) });
  } catch (err) {
    await ctl.stop();
    throw err;
  }
  let url: string;
  try {
    url = await listenServer(app, o.listen);
  } catch (err) {
    // Without its API the controller must not run on (it would act unobserved until killed).
    await ctl.stop();
    throw err;
  }
  return {
    ctl,
    url,
    async stop() {
      try {
        await app.close();
      } finally {
        await ctl.stop();
      }
    },
  };
}

/** Resolves on the first SIGTERM or SIGINT, or once stdout is closed (`… | head`: nothing can be shown or logged). */
export function untilSignal(): Promise<NodeJS.Signals | 'stdout closed'> {
  return new Promise((resolve) => {
    const on = (sig: NodeJS.Signals | 'stdout closed') => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      logger('manager').info({ signal: sig }, 'stopping');
      resolve(sig);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
    void stdoutClosed().then(() => on('stdout closed'));
  });
}
