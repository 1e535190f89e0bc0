// Workflows of the task platform.
export { taskDagWorkflow, taskRunWorkflow, taskStatusQuery } from './task-dag';
