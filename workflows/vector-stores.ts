import { continueAsNew, isCancellation, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { activityFailureMessage } from './failure';

// A file is read, split and embedded in one activity; a slow embeddings provider gets minutes, a dead worker is
// noticed by the missed heartbeat.
const { indexVectorStoreFile } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});
const { vectorStoreFileFailed } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 20 },
});

/** Files read at once by one workflow. */
const LANES = 3;

/** What each outcome counted, over every run of the workflow (continue-as-new carries it). */
interface Counts {
  completed: number;
  failed: number;
  skipped: number;
}

/**
 * Files added to a vector store (`vsfiles-<generation>`, or the batch's id): each read into the store, a few at a
 * time; a file whose reading fails past its retries is marked failed (server_error) and the others go on. A cancel
 * (of the batch) stops the reading; the API has marked the files cancelled already. A batch of up to 2,000 files is
 * thousands of history events: when Temporal suggests it, the run stops taking files, lets those in flight finish,
 * and continues as new with the rest.
 * @returns how many files each outcome had
 */
export async function vectorStoreFilesWorkflow(input: {
  tenantId: string;
  storeId: string;
  generation: string;
  fileIds: string[];
  counts?: Counts;
}): Promise<Counts> {
  const counts = { completed: 0, failed: 0, skipped: 0, ...input.counts };
  let next = 0;
  const lane = async () => {
    while (next < input.fileIds.length && !workflowInfo().continueAsNewSuggested) {
      const ref = {
        tenantId: input.tenantId,
        storeId: input.storeId,
        generation: input.generation,
        fileId: input.fileIds[next++],
      };
      try {
        counts[await indexVectorStoreFile(ref)]++;
      } catch (err) {
        if (isCancellation(err)) throw err;
        await vectorStoreFileFailed({ ...ref, message: activityFailureMessage(err, 'the file could not be read') });
        counts.failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(LANES, input.fileIds.length) }, lane));
  if (next < input.fileIds.length)
    await continueAsNew<typeof vectorStoreFilesWorkflow>({ ...input, fileIds: input.fileIds.slice(next), counts });
  return counts;
}
