// Durable agent jobs: goals, sovereign goals, parallel agent dispatch, swarm runs.
export { goalWorkflow } from './goal';
export { sovereignGoalWorkflow } from './sovereign-goal';
export { padWorkflow } from './pad';
export { swarmWorkflow } from './swarm';
