import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { SvcTenant } from './search-attributes';

const { echo } = proxyActivities<Activities>({ startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 3 } });

/** Proves the worker, the bundle, activities and search attributes work end to end. */
export async function smokeWorkflow(input: {
  message: string;
}): Promise<{ echoed: string; workflowId: string; tenant?: string }> {
  const echoed = await echo({ message: input.message });
  const tenant = workflowInfo().typedSearchAttributes.get(SvcTenant);
  return { echoed, workflowId: workflowInfo().workflowId, tenant };
}
