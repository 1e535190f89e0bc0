// Barrel for the workflow bundler: every workflow the worker runs is exported here.
export { smokeWorkflow } from './smoke';
export * from './tasks';
export * from './knowledge';
export * from './jobs';
export * from './browser-session';
