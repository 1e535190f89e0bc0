// Workflows of the task platform.
export { taskDagWorkflow, taskStatusQuery } from './task-dag';
