// Barrel for the workflow bundler: every workflow the worker runs is exported here.
export { smokeWorkflow } from './smoke';
export * from './tasks';
export * from './knowledge';
export * from './jobs';
export * from './live';
export { emailWorkflow } from './email';
export { researchWorkflow } from './research';
export * from './browser-session';
export { agentWorkflow } from './agent';
export * from './plan';
export { backgroundResponseWorkflow } from './responses';
export { batchWorkflow } from './batches';
export { retentionSweepWorkflow } from './maintenance';
export { webhookEventWorkflow } from './webhooks';
export { vectorStoreFilesWorkflow } from './vector-stores';
