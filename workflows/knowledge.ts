// Workflows of the knowledge area.
export { learnWorkflow, learnProgressQuery } from './learn';
