import { defineQuery } from '@temporalio/workflow';
import type { TaskRunState } from '../schema/tasks';

/** Live state of a run (GET /v1/tasks/{id}/execute while running). Beside the workflow, importable by clients without its body. */
export const taskStatusQuery = defineQuery<TaskRunState>('taskStatus');
