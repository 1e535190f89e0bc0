import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { PlanRunState } from '../schema/tools-plans';

/** Live state of a plan run (GET /v1/tools/plans/runs/{id} while it runs). */
export const planStatusQuery = defineQuery<PlanRunState>('planStatus');
/** Approves gated steps (POST /v1/tools/plans/runs/{id}/approve); the validator refuses unknown or ungated ids. */
export const planApproveUpdate = defineUpdate<PlanRunState, [string[]]>('planApprove');
