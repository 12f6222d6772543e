export { createLeaderElector, type LeaderElector, type LeaderElectorOptions, type LeaseApi } from './leader-elector.js';
