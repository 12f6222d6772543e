/** What every route group reads: the shared state, the controller's view, the metrics, the dashboard model. */
import type { WorldState } from '../../cache/world-state.js';
import type { ControllerMetrics } from '../../metrics/controller-metrics.js';
import type { DashboardModel } from '../../dashboard/dashboard-model.js';
import type { InspectionView } from '../inspection-view.js';

export interface RouteDeps {
  readonly state: WorldState;
  readonly view: InspectionView;
  readonly metrics: ControllerMetrics;
  readonly dashboard: DashboardModel;
}
